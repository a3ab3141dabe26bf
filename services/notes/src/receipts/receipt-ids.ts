import { createHmac, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { RECEIPT_ID_BYTES } from '../domain/note-crypto';

/** 256 random bits, base64url: 43 characters. */
export const RECEIPT_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * Receipt ids (DECISIONS 12): a second bearer secret, random and unrelated to the uuid, stored
 * only as an HMAC under a key derived from the (never rotating) lookup key for this purpose alone.
 */
export class ReceiptIds {
  /** A KeyObject: node 24 checks a Buffer HMAC key the slow way (measured: 20 µs against 3 per HMAC). */
  private readonly key: KeyObject;

  constructor(lookupKey: Buffer) {
    this.key = createSecretKey(Buffer.from(hkdfSync('sha256', lookupKey, Buffer.alloc(0), 'vanish receipt ids v1', 32)));
  }

  newId(): string {
    return this.idFrom(randomBytes(RECEIPT_ID_BYTES));
  }

  /** The id made of RECEIPT_ID_BYTES random bytes drawn elsewhere (a new note's NoteRandom). */
  idFrom(randomBytes: Buffer): string {
    if (randomBytes.length !== RECEIPT_ID_BYTES) throw new Error(`a receipt id is made of ${RECEIPT_ID_BYTES} random bytes`);
    return randomBytes.toString('base64url');
  }

  /** The stored form. Computed for every well-formed id, found or not, so that lookups cost the same. */
  keyOf(receiptId: string): string {
    return createHmac('sha256', this.key).update(receiptId, 'utf8').digest('hex');
  }
}

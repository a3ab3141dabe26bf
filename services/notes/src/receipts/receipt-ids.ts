import { createHmac, hkdfSync, randomBytes } from 'node:crypto';

/** 256 random bits, base64url: 43 characters. */
export const RECEIPT_ID = /^[A-Za-z0-9_-]{43}$/;

/**
 * Receipt ids (DECISIONS 12): a second bearer secret, random and unrelated to the uuid, stored
 * only as an HMAC under a key derived from the (never rotating) lookup key for this purpose alone.
 */
export class ReceiptIds {
  private readonly key: Buffer;

  constructor(lookupKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', lookupKey, Buffer.alloc(0), 'vanish receipt ids v1', 32));
  }

  newId(): string {
    return randomBytes(32).toString('base64url');
  }

  /** The stored form. Computed for every well-formed id, found or not, so that lookups cost the same. */
  keyOf(receiptId: string): string {
    return createHmac('sha256', this.key).update(receiptId, 'utf8').digest('hex');
  }
}

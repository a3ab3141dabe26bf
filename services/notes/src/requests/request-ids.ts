import { createHmac, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';

/** 256 random bits, base64url: 43 characters (the request id and the inbox id alike). */
export const REQUEST_ID = /^[A-Za-z0-9_-]{43}$/;
const ID_BYTES = 32;

/**
 * Request and inbox ids (DECISIONS 15): two random bearer secrets, unrelated to each other, stored only as HMACs
 * under keys derived from the (never rotating) lookup key, each for its purpose alone (as receipt ids are).
 */
export class RequestIds {
  private readonly requestKey: KeyObject;
  private readonly inboxKey: KeyObject;

  constructor(lookupKey: Buffer) {
    this.requestKey = createSecretKey(Buffer.from(hkdfSync('sha256', lookupKey, Buffer.alloc(0), 'vanish request ids v1', 32)));
    this.inboxKey = createSecretKey(Buffer.from(hkdfSync('sha256', lookupKey, Buffer.alloc(0), 'vanish inbox ids v1', 32)));
  }

  newId(): string {
    return randomBytes(ID_BYTES).toString('base64url');
  }

  /** 128 random bits, hex: the request's reference in webhook events. */
  newRef(): string {
    return randomBytes(16).toString('hex');
  }

  /** Computed for every well-formed id, found or not, so that lookups cost the same. */
  requestKeyOf(requestId: string): string {
    return createHmac('sha256', this.requestKey).update(requestId, 'utf8').digest('hex');
  }

  inboxKeyOf(inboxId: string): string {
    return createHmac('sha256', this.inboxKey).update(inboxId, 'utf8').digest('hex');
  }
}

import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/**
 * Keyed hash (HMAC-SHA-256) of a normalised address: the only form in which the mailer stores or
 * counts an address. Without the key, a copy of the tables cannot be matched to addresses.
 */
export class AddressHasher {
  private readonly key: KeyObject;

  constructor(key: Buffer) {
    if (key.length < 32) throw new Error('the address-hash key must be at least 32 bytes');
    // A KeyObject made once: Node 24 spends several times the HMAC itself checking a Buffer key on every call (docs/mailer.md).
    this.key = createSecretKey(key);
  }

  hash(address: string): string {
    return createHmac('sha256', this.key).update(`address:${normalizeAddress(address)}`).digest('hex');
  }
}

/** Case and surrounding space never make two addresses: quotas and suppressions must not be dodged that way. */
export function normalizeAddress(address: string): string {
  return address.trim().toLowerCase();
}

import { createHmac } from 'node:crypto';

/**
 * Keyed hash (HMAC-SHA-256) of a normalised address: the only form in which the mailer stores or
 * counts an address. Without the key, a copy of the tables cannot be matched to addresses.
 */
export class AddressHasher {
  constructor(private readonly key: Buffer) {
    if (key.length < 32) throw new Error('the address-hash key must be at least 32 bytes');
  }

  hash(address: string): string {
    return createHmac('sha256', this.key).update(`address:${normalizeAddress(address)}`).digest('hex');
  }
}

/** Case and surrounding space never make two addresses: quotas and suppressions must not be dodged that way. */
export function normalizeAddress(address: string): string {
  return address.trim().toLowerCase();
}

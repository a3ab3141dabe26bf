import { createHmac, createSecretKey, hkdfSync, timingSafeEqual, type KeyObject } from 'node:crypto';

const VERSION = 'u1';
const HASH_HEX = /^[0-9a-f]{64}$/;

/**
 * Unsubscribe tokens: `u1.<address hash, base64url>.<HMAC tag, base64url>`. They identify the
 * address's keyed hash (never the address), and only the mailer can make one, so a token can
 * unsubscribe exactly the address it was sent to. They do not expire: an old e-mail's link works.
 */
export class UnsubscribeTokens {
  /** A KeyObject, as in AddressHasher: a Buffer key costs a check on every HMAC. */
  private readonly key: KeyObject;

  constructor(hashKey: Buffer) {
    this.key = createSecretKey(Buffer.from(hkdfSync('sha256', hashKey, Buffer.alloc(0), 'vanish.mailer.unsubscribe-token.v1', 32)));
  }

  issue(addressHash: string): string {
    if (!HASH_HEX.test(addressHash)) throw new Error('not an address hash');
    const body = Buffer.from(addressHash, 'hex').toString('base64url');
    return `${VERSION}.${body}.${this.tag(body).toString('base64url')}`;
  }

  /** The address hash, or undefined for anything this mailer did not issue. */
  verify(token: string): string | undefined {
    if (token.length > 200) return undefined;
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== VERSION) return undefined;
    const [, body, tag] = parts as [string, string, string];
    // Compared as canonical text: base64 has spare bits, and a token must have exactly one spelling.
    const expected = Buffer.from(this.tag(body).toString('base64url'));
    const given = Buffer.from(tag);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const hash = Buffer.from(body, 'base64url');
    return hash.length === 32 && hash.toString('base64url') === body ? hash.toString('hex') : undefined;
  }

  private tag(body: string): Buffer {
    return createHmac('sha256', this.key).update(`${VERSION}.${body}`).digest().subarray(0, 16);
  }
}

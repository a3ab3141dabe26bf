import { createHmac, createSecretKey, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { Clock } from '@vanish/common';

/** Remembers redeemed form tokens until they expire, shared by every notes replica. */
export interface UsedTokenStore {
  /** True the first time a token id is consumed; false on every replay. */
  consume(tokenId: string, expiresAt: Date): Promise<boolean>;
}

export type FormPurpose = 'create' | 'reveal' | 'end-note' | 'checkin';

interface TokenPayload {
  p: FormPurpose;
  n: string;
  e: number;
  t: string;
}

/**
 * CSRF defence for cookie-less forms: a signed token that names its purpose, the note it was
 * issued for (as a keyed hash, never the uuid), and an expiry, redeemable once. Together with the
 * origin check it stops a foreign page from making a visitor's browser burn a view.
 */
export class FormTokens {
  /** A KeyObject: node 24 checks a Buffer HMAC key the slow way (docs/notes-storage.md, Crypto). */
  private readonly key: KeyObject;

  constructor(
    key: Buffer,
    private readonly used: UsedTokenStore,
    private readonly clock: Clock,
    private readonly ttlMs = 60 * 60 * 1000,
  ) {
    this.key = createSecretKey(key);
  }

  issue(purpose: FormPurpose, target = ''): string {
    const payload: TokenPayload = {
      p: purpose,
      n: randomBytes(16).toString('base64url'),
      e: this.clock.now().getTime() + this.ttlMs,
      t: this.targetHash(target),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** Checks signature, purpose, target and expiry, then consumes the token; false for anything off. */
  async redeem(token: unknown, purpose: FormPurpose, target = ''): Promise<boolean> {
    if (typeof token !== 'string' || token.length > 512) return false;
    const [body, signature] = token.split('.');
    if (!body || !signature) return false;
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return false;
    let payload: TokenPayload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as TokenPayload;
    } catch {
      return false;
    }
    if (payload.p !== purpose || payload.t !== this.targetHash(target)) return false;
    if (typeof payload.e !== 'number' || payload.e < this.clock.now().getTime()) return false;
    return this.used.consume(`${payload.p}:${payload.n}`, new Date(payload.e));
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(`form-token:${body}`).digest('base64url');
  }

  private targetHash(target: string): string {
    return target === '' ? '' : createHmac('sha256', this.key).update(`form-target:${target}`).digest('base64url').slice(0, 22);
  }
}

/** For a single process (unit tests); replicas share a KnexUsedTokenStore. */
export class MemoryUsedTokenStore implements UsedTokenStore {
  private readonly used = new Map<string, number>();
  constructor(private readonly clock: Clock) {}

  async consume(tokenId: string, expiresAt: Date): Promise<boolean> {
    const now = this.clock.now().getTime();
    for (const [id, expiry] of this.used) if (expiry < now) this.used.delete(id);
    if (this.used.has(tokenId)) return false;
    this.used.set(tokenId, expiresAt.getTime());
    return true;
  }
}

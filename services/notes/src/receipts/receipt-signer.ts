import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { parseStrictJson, type KeyRing } from '@vanish/common';

/** DER prefix of a PKCS #8 Ed25519 private key; the 32-byte seed follows (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export interface ReceiptPublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: 'EdDSA';
  use: 'sig';
}

/** A signed receipt as served and saved: the receipt and a detached JWS (RFC 7515 appendix F) over its canonical form. */
export interface SignedReceipt {
  receipt: Record<string, unknown>;
  signature: { alg: 'EdDSA'; kid: string; jws: string };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * RFC 8785 (JCS) for the values a receipt holds (strings, safe integers, booleans, null, arrays,
 * objects): keys sorted by UTF-16 code units, no whitespace, ECMAScript string and number
 * serialization. (The npm `canonicalize` package does the same but ships only as an ES module.)
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error('receipts hold only safe integers');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, Json>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  throw new Error(`cannot canonicalize a ${typeof value}`);
}

function privateKeyOf(seed: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/**
 * Signs receipts with the first key of RECEIPT_SIGNING_KEYS (32-byte Ed25519 seeds, `id:BASE64`
 * like every ring) and publishes the public half of every key in the ring, so receipts signed
 * before a rotation still verify while the retired key stays listed.
 */
export class ReceiptSigner {
  private readonly signingKey: KeyObject;
  private readonly signingKid: string;
  readonly publicJwks: { keys: ReceiptPublicJwk[] };

  constructor(ring: KeyRing) {
    this.signingKid = ring.current.id;
    this.signingKey = privateKeyOf(ring.current.material);
    this.publicJwks = {
      keys: ring.keys.map((key) => {
        const jwk = createPublicKey(privateKeyOf(key.material)).export({ format: 'jwk' });
        return { kty: 'OKP', crv: 'Ed25519', x: String(jwk.x), kid: key.id, alg: 'EdDSA', use: 'sig' };
      }),
    };
  }

  sign(receipt: Record<string, unknown>): SignedReceipt {
    const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: this.signingKid })).toString('base64url');
    const payload = Buffer.from(canonicalJson(receipt), 'utf8').toString('base64url');
    const signature = sign(null, Buffer.from(`${header}.${payload}`, 'ascii'), this.signingKey).toString('base64url');
    return { receipt, signature: { alg: 'EdDSA', kid: this.signingKid, jws: `${header}..${signature}` } };
  }
}

/**
 * Verifies a saved receipt offline against a published key set (what `npm run verify-receipt`
 * does). Returns the key id that signed it, or a reason it does not verify.
 */
export function verifySignedReceipt(saved: unknown, jwks: { keys: ReadonlyArray<Partial<ReceiptPublicJwk>> }): { valid: true; kid: string } | { valid: false; reason: string } {
  if (typeof saved !== 'object' || saved === null) return { valid: false, reason: 'not a receipt' };
  const { receipt, signature } = saved as Partial<SignedReceipt>;
  if (typeof receipt !== 'object' || receipt === null || typeof signature?.jws !== 'string') return { valid: false, reason: 'no receipt or no signature' };
  const [headerPart, empty, signaturePart, ...rest] = signature.jws.split('.');
  if (!headerPart || empty !== '' || !signaturePart || rest.length > 0) return { valid: false, reason: 'the signature is not a detached JWS' };
  let header: { alg?: unknown; kid?: unknown; b64?: unknown; crit?: unknown };
  try {
    // Strictly: `{"alg":"none","alg":"EdDSA"}` would be read one way here and another by other verifiers.
    header = parseStrictJson(Buffer.from(headerPart, 'base64url').toString('utf8')) as typeof header;
  } catch {
    return { valid: false, reason: 'the JWS header is not strict JSON' };
  }
  if (typeof header !== 'object' || header === null) return { valid: false, reason: 'unexpected JWS header' };
  if (header.alg !== 'EdDSA' || typeof header.kid !== 'string' || header.b64 !== undefined || header.crit !== undefined) return { valid: false, reason: 'unexpected JWS header' };
  const jwk = jwks.keys.find((key) => key.kid === header.kid);
  if (!jwk || jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') return { valid: false, reason: `no published Ed25519 key "${String(header.kid)}"` };
  let canonical: string;
  try {
    canonical = canonicalJson(receipt);
  } catch (err) {
    return { valid: false, reason: (err as Error).message };
  }
  const signingInput = `${headerPart}.${Buffer.from(canonical, 'utf8').toString('base64url')}`;
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  const ok = verify(null, Buffer.from(signingInput, 'ascii'), key, Buffer.from(signaturePart, 'base64url'));
  return ok ? { valid: true, kid: header.kid } : { valid: false, reason: 'the signature does not match the receipt' };
}

/**
 * The note envelope of DECISIONS 13: the writer's machine seals the text under a random 256-bit key K
 * (AES-256-GCM, random 96-bit IV) as `vz1.<base64url(iv)>.<base64url(ciphertext and tag)>`, and the link
 * carries K in its fragment, which browsers never send. `key_check` lets the server tell a link with the
 * right key from one without it, without ever learning K.
 *
 * This file is shared, byte for byte, by the web page (served from /assets, wrapped so that it sets
 * `window.vanishEnvelope`) and by the command-line client, so it must stay free of imports and of anything
 * but WebCrypto, TextEncoder/TextDecoder and btoa/atob, which both browsers and Node 24 have.
 */

export const ENVELOPE_VERSION = 'vz1';
/** An envelope of 10,000 code points of 4-byte UTF-8 is under 54,000 characters; 60,000 leaves room. */
export const ENVELOPE_MAX_LENGTH = 60_000;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_CHECK_LABEL = 'vanish key check v1';
const B64URL = /^[A-Za-z0-9_-]+$/;
/** base64url (no padding) of 12 bytes is 16 characters, of 32 bytes 43. */
const IV_CHARS = 16;
const KEY_CHARS = 43;

export function toBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 1) binary += String.fromCharCode(bytes[i]!);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function fromBase64Url(text: string): Uint8Array {
  if (!B64URL.test(text) || text.length % 4 === 1) throw new Error('not base64url');
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((text.length + 3) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  // Only the canonical spelling: two texts never name the same bytes.
  if (toBase64Url(bytes) !== text) throw new Error('not canonical base64url');
  return bytes;
}

/** A new random key K, as the base64url text that goes into the link's fragment. */
export function newKey(): string {
  return toBase64Url(crypto.getRandomValues(new Uint8Array(KEY_BYTES)));
}

/** The fragment's key back to bytes, or null when it is not a well-formed key. */
export function parseKey(fragment: string): Uint8Array | null {
  const text = fragment.replace(/^#/, '');
  if (text.length !== KEY_CHARS) return null;
  try {
    const bytes = fromBase64Url(text);
    return bytes.length === KEY_BYTES ? bytes : null;
  } catch {
    return null;
  }
}

function aesKey(key: Uint8Array, usage: 'encrypt' | 'decrypt'): ReturnType<typeof crypto.subtle.importKey> {
  return crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'AES-GCM' }, false, [usage]);
}

/** Seals the text under the key (base64url, as in the fragment). */
export async function seal(text: string, keyText: string): Promise<string> {
  const key = parseKey(keyText);
  if (!key) throw new Error('the key must be 32 bytes of base64url');
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, await aesKey(key, 'encrypt'), new TextEncoder().encode(text));
  return `${ENVELOPE_VERSION}.${toBase64Url(iv)}.${toBase64Url(new Uint8Array(sealed))}`;
}

/** Opens an envelope with the key; throws when the key is wrong or the envelope was changed. */
export async function open(envelope: string, keyText: string): Promise<string> {
  const key = parseKey(keyText);
  const parts = parseEnvelope(envelope);
  if (!key || !parts) throw new Error('a malformed key or envelope');
  const plain = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: parts.iv as Uint8Array<ArrayBuffer> }, await aesKey(key, 'decrypt'), parts.sealed as Uint8Array<ArrayBuffer>);
  return new TextDecoder('utf-8', { fatal: true }).decode(plain);
}

/** The envelope's parts, or null when it is not a well-formed `vz1` envelope (the server's check too). */
export function parseEnvelope(envelope: string): { iv: Uint8Array; sealed: Uint8Array } | null {
  if (typeof envelope !== 'string' || envelope.length > ENVELOPE_MAX_LENGTH) return null;
  const parts = envelope.split('.');
  if (parts.length !== 3 || parts[0] !== ENVELOPE_VERSION || parts[1]!.length !== IV_CHARS) return null;
  try {
    const iv = fromBase64Url(parts[1]!);
    const sealed = fromBase64Url(parts[2]!);
    // An empty text still has its 16-byte tag; the validator refuses empty notes before sealing.
    return iv.length === IV_BYTES && sealed.length > TAG_BYTES ? { iv, sealed } : null;
  } catch {
    return null;
  }
}

/** base64url(HMAC-SHA-256(K, "vanish key check v1")): proof of the key that does not reveal it. */
export async function keyCheck(keyText: string): Promise<string> {
  const key = parseKey(keyText);
  if (!key) throw new Error('the key must be 32 bytes of base64url');
  const hmacKey = await crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return toBase64Url(new Uint8Array(await crypto.subtle.sign('HMAC', hmacKey, new TextEncoder().encode(KEY_CHECK_LABEL))));
}

/** A key_check as the server accepts it: base64url of 32 bytes. */
export function isKeyCheck(value: unknown): value is string {
  if (typeof value !== 'string' || value.length !== KEY_CHARS) return false;
  try {
    return fromBase64Url(value).length === 32;
  } catch {
    return false;
  }
}

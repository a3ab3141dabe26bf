import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EnvReader } from './config';
import type { Logger } from './logger';

export interface Key {
  id: string;
  material: Buffer;
}

/**
 * A ring of 256-bit keys: the first one seals, every one opens. Rotation puts a new key first and
 * keeps the old ones until nothing sealed under them is left.
 */
export class KeyRing {
  private readonly byId: Map<string, Key>;

  constructor(readonly keys: readonly Key[]) {
    if (keys.length === 0) throw new Error('a key ring needs at least one key');
    this.byId = new Map(keys.map((key) => [key.id, key]));
  }

  get current(): Key {
    return this.keys[0]!;
  }

  find(id: string): Key | undefined {
    return this.byId.get(id);
  }

  /** `k2:BASE64,k1:BASE64`: ids of letters, digits, dash or underscore; keys of exactly 32 bytes. */
  static parse(text: string): KeyRing {
    const keys = text.split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
      const colon = entry.indexOf(':');
      if (colon < 1) throw new Error('each key must be written id:BASE64');
      const id = entry.slice(0, colon);
      if (!/^[A-Za-z0-9_-]{1,32}$/.test(id)) throw new Error(`key id "${id}" must be 1-32 letters, digits, - or _`);
      const material = Buffer.from(entry.slice(colon + 1), 'base64');
      if (material.length !== 32) throw new Error(`key "${id}" must be 32 bytes of base64, got ${material.length}`);
      return { id, material };
    });
    if (new Set(keys.map((key) => key.id)).size !== keys.length) throw new Error('key ids must be unique');
    return new KeyRing(keys);
  }

  static generate(id = 'k1'): KeyRing {
    return new KeyRing([{ id, material: randomBytes(32) }]);
  }

  serialize(): string {
    return this.keys.map((key) => `${key.id}:${key.material.toString('base64')}`).join(',');
  }
}

export const AEAD_NONCE_BYTES = 12;
const NONCE_BYTES = AEAD_NONCE_BYTES;
const TAG_BYTES = 16;

/**
 * A key for aeadSeal and aeadOpen. A KeyObject (`createSecretKey`) is the cheap form for a key used
 * per request: node 24 checks a Buffer key for being a KeyObject or CryptoKey the slow way, which
 * made one AES-GCM seal of a note about four times dearer than with a KeyObject.
 */
export type AeadKey = Buffer | KeyObject;

/**
 * AES-256-GCM: nonce | ciphertext | tag. The nonce is random: drawn here, or given by a caller that
 * drew several at once (AEAD_NONCE_BYTES of CSPRNG output, never reused under the same key).
 */
export function aeadSeal(key: AeadKey, plaintext: Buffer, associatedData?: Buffer, nonce: Buffer = randomBytes(NONCE_BYTES)): Buffer {
  if (nonce.length !== NONCE_BYTES) throw new Error(`an AES-GCM nonce is ${NONCE_BYTES} bytes`);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  if (associatedData) cipher.setAAD(associatedData);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]);
}

/** Throws when the key is wrong or a single bit of the box or its associated data changed. */
export function aeadOpen(key: AeadKey, box: Buffer, associatedData?: Buffer): Buffer {
  if (box.length < NONCE_BYTES + TAG_BYTES) throw new Error('sealed box too short');
  const nonce = box.subarray(0, NONCE_BYTES);
  const tag = box.subarray(box.length - TAG_BYTES);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  if (associatedData) decipher.setAAD(associatedData);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(box.subarray(NONCE_BYTES, box.length - TAG_BYTES)), decipher.final()]);
}

/**
 * Seals small messages under a key ring as a self-describing string `keyId.BASE64`, so any holder
 * of the ring can open what any other sealed, across rotations.
 */
export class MessageSealer {
  constructor(private readonly ring: KeyRing, private readonly purpose: string) {}

  seal(plaintext: string): string {
    const key = this.ring.current;
    const box = aeadSeal(key.material, Buffer.from(plaintext, 'utf8'), Buffer.from(`${this.purpose}:${key.id}`));
    return `${key.id}.${box.toString('base64')}`;
  }

  open(sealed: string): string {
    const dot = sealed.indexOf('.');
    const key = dot > 0 ? this.ring.find(sealed.slice(0, dot)) : undefined;
    if (!key) throw new Error('sealed message names an unknown key');
    const box = Buffer.from(sealed.slice(dot + 1), 'base64');
    return aeadOpen(key.material, box, Buffer.from(`${this.purpose}:${key.id}`)).toString('utf8');
  }
}

/**
 * A key ring from NAME (or NAME_FILE). Outside production, when unset, it is generated once into
 * DATA_DIR/keys and kept there, with a warning: losing that file loses what it sealed.
 */
export function loadKeyRing(
  reader: EnvReader, name: string, dataDir: string, logger?: Logger,
  /** What losing the generated key costs, said in the warning. */
  whenLost = 'losing it loses every note it sealed',
): KeyRing | undefined {
  const text = reader.raw(name);
  if (text !== undefined) {
    try {
      return KeyRing.parse(text);
    } catch (err) {
      reader.problem(`${name}: ${(err as Error).message}`);
      return undefined;
    }
  }
  if (reader.isProduction) {
    reader.problem(`${name}: required with NODE_ENV=production (keys are never generated in production)`);
    return undefined;
  }
  const file = join(dataDir, 'keys', `${name.toLowerCase()}.txt`);
  if (existsSync(file)) return KeyRing.parse(readFileSync(file, 'utf8').trim());
  const ring = KeyRing.generate();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${ring.serialize()}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  logger?.warn(`${name} is not set: generated a key into ${file}. Back it up: ${whenLost}. Set ${name} in production.`);
  return ring;
}

/** A single 32-byte secret (LOOKUP_KEY) under the same rules as loadKeyRing. */
export function loadSecretKey(
  reader: EnvReader, name: string, dataDir: string, logger?: Logger, whenLost?: string,
): Buffer | undefined {
  const text = reader.raw(name);
  if (text !== undefined) {
    const material = Buffer.from(text, 'base64');
    if (material.length !== 32) {
      reader.problem(`${name}: must be 32 bytes of base64`);
      return undefined;
    }
    return material;
  }
  const ring = loadKeyRing(reader, name, dataDir, logger, whenLost);
  return ring?.current.material;
}

import { createCipheriv, createDecipheriv, randomBytes, type KeyObject } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
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

  /** One fresh key; without an id, one no other generated key has had (newKeyId). */
  static generate(id = newKeyId('k')): KeyRing {
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
 * An id no generated key has had before: a prefix, the date, and 48 random bits (`k20261127-3fa9c1e07b2d`).
 * A key made again after one was lost must not take the lost key's id, or whatever names that id (a
 * receipt's `kid`, a sealed box's key id) would be checked against the wrong key instead of being
 * reported as signed or sealed by a key that is gone.
 */
export function newKeyId(prefix: string): string {
  const day = new Date().toISOString().slice(0, 10).replace(/-/g, '');
  return `${prefix}${day}-${randomBytes(6).toString('hex')}`;
}

/** Files that say a data folder already holds data: SQLite databases (and their journals) and key files. */
const DATA_FILE = /\.(db|db-wal|db-shm|sqlite|sqlite3)$/;

/**
 * What a data folder holds that a generated key would orphan; empty when it holds nothing: key files, and
 * the databases whose rows the key protects (`guards`: file names in DATA_DIR; unset: any database).
 */
export function existingData(dataDir: string, guards?: readonly string[]): string[] {
  const list = (dir: string) => { try { return readdirSync(dir); } catch { return []; } };
  const guarded = (name: string) => DATA_FILE.test(name) && (guards === undefined || guards.some((file) => name === file || name.startsWith(`${file}-`)));
  return [
    ...list(dataDir).filter(guarded),
    ...list(join(dataDir, 'keys')).filter((name) => name.endsWith('.txt')).map((name) => join('keys', name)),
  ].sort();
}

/**
 * Whether this process may generate keys into a data folder: only when the folder held no data at all the
 * first time this process looked (the all-in-one, or one service, generates all its keys together on the
 * very first start). Decided once per folder and process, so the second key of a first start is not
 * refused because of the first.
 */
const generationAllowed = new Map<string, boolean>();

function mayGenerateInto(dataDir: string, guards: readonly string[] | undefined): { allowed: boolean; found: string[] } {
  const key = resolve(dataDir);
  const known = generationAllowed.get(key);
  if (known === undefined) {
    const found = existingData(dataDir, guards);
    generationAllowed.set(key, found.length === 0);
    return { allowed: found.length === 0, found };
  }
  // Keys this process made on its first look do not count; the databases this key protects still do.
  const databases = existingData(dataDir, guards).filter((name) => !name.startsWith('keys'));
  if (known && databases.length === 0) return { allowed: true, found: [] };
  return { allowed: false, found: known ? databases : existingData(dataDir, guards) };
}

export interface KeyFileOptions {
  /**
   * A key whose loss costs nothing lasting (LIMITER_KEY: rate-limit counters start again) may be made
   * again beside existing data; every other key may not.
   */
  regenerable?: boolean;
  /**
   * The key file of the ring this one succeeds (MAIL_PRIVATE_KEYS after the legacy MAIL_KEYS): data that
   * holds it and not this ring's file was made before this ring existed, so this ring is made for it.
   */
  succeeds?: string;
  /** The database files in DATA_DIR whose rows this key protects (unset: any database there). */
  guards?: readonly string[];
}

/** Options of MAIL_PRIVATE_KEYS, wherever it is loaded (the mailer; notes deriving the public half). */
export const MAIL_PRIVATE_KEYS_FILE_OPTIONS: KeyFileOptions = { succeeds: 'mail_keys.txt', guards: ['notes.db', 'mailer.db'] };
/** Notes' own keys: its rows, receipts and outbox are what they seal and sign. */
export const NOTES_KEY_FILE_OPTIONS: KeyFileOptions = { guards: ['notes.db'] };
/** The webhooks ring seals the targets kept in notes' rows (the webhooks database holds no sealed data). */
export const WEBHOOK_PRIVATE_KEYS_FILE_OPTIONS: KeyFileOptions = { guards: ['notes.db'] };

/**
 * A key ring from NAME (or NAME_FILE). Outside production, when unset, it is read from
 * DATA_DIR/keys/name.txt; it is generated there (with a warning: losing that file loses what it sealed)
 * only when the data folder holds no data at all. A key file missing beside existing data (a database, other
 * keys), or one that cannot be read, stops the start with a problem naming the file and what to restore:
 * a new key would silently orphan every note, e-mail, webhook and receipt sealed or signed by the old one.
 */
export function loadKeyRing(
  reader: EnvReader, name: string, dataDir: string, logger?: Logger,
  /** What losing the generated key costs, said in the warning. */
  whenLost = 'losing it loses every note it sealed',
  options: KeyFileOptions = {},
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
  const keysDir = join(dataDir, 'keys');
  const file = join(keysDir, `${name.toLowerCase()}.txt`);
  const restore = `Restore it from your backup of ${keysDir}, or set ${name}`;
  if (existsSync(file)) {
    try {
      return KeyRing.parse(readFileSync(file, 'utf8').trim());
    } catch (err) {
      reader.problem(`${name}: the key file ${file} cannot be read (${(err as Error).message}). ${restore}.`);
      return undefined;
    }
  }
  const { allowed, found } = mayGenerateInto(dataDir, options.guards);
  const upgrade = options.succeeds !== undefined && existsSync(join(keysDir, options.succeeds));
  if (!allowed && !options.regenerable && !upgrade) {
    reader.problem(`${name}: the key file ${file} is missing, but ${dataDir} already holds data (${found.slice(0, 4).join(', ')}${found.length > 4 ? ', …' : ''}). ${restore}. `
      + `A new key would not open what the old one sealed (${whenLost}), so none is made. To start afresh instead, move ${dataDir} away.`);
    return undefined;
  }
  const ring = KeyRing.generate(newKeyId(name.charAt(0).toLowerCase()));
  mkdirSync(keysDir, { recursive: true, mode: 0o700 });
  chmodSync(keysDir, 0o700);
  writeFileSync(file, `${ring.serialize()}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  logger?.warn(`${name} is not set: generated a key into ${file}. Back it up: ${whenLost}. Set ${name} in production.`);
  return ring;
}

/** A single 32-byte secret (LOOKUP_KEY) under the same rules as loadKeyRing. */
export function loadSecretKey(
  reader: EnvReader, name: string, dataDir: string, logger?: Logger, whenLost?: string, options: KeyFileOptions = {},
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
  const ring = loadKeyRing(reader, name, dataDir, logger, whenLost, options);
  return ring?.current.material;
}

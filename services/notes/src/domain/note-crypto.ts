import { createHmac, hkdfSync, randomBytes, randomUUID, scrypt } from 'node:crypto';
import { InternalError, aeadOpen, aeadSeal, type KeyRing } from '@vanish/common';

/**
 * Cost of the passcode KDF. Production uses PRODUCTION_SCRYPT_PARAMS (asserted by a unit test so
 * that nobody lowers them to speed tests up); tests may pass cheaper parameters explicitly.
 */
export interface ScryptParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

/** scrypt N=2^15, r=8, p=1: 32 MiB and roughly 50-100 ms per derivation on a server core. */
export const PRODUCTION_SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const CHECK_PLAINTEXT = Buffer.from('vanish.note-check.v1', 'utf8');
const HKDF_INFO = 'vanish.note-key.v1';
const AAD_PREFIX = 'vanish.note.v1';

export type SealedField = 'check' | 'content' | 'email' | 'receipt';

/** What the store keeps of a note's secrets: no uuid, no passcode, nothing in clear. */
export interface SealedNote {
  /** HMAC-SHA-256(LOOKUP_KEY, uuid), hex: the row's key. */
  lookup: string;
  /** Id of the master key the note key was derived from (rotation). */
  keyId: string;
  /** Per-note random salt for HKDF (and scrypt, when a passcode is set). */
  salt: Buffer;
  /** `scrypt$N$r$p` when a passcode is set, else null: stored so raising the cost later keeps old notes open. */
  kdf: string | null;
  checkBox: Buffer;
  contentBox: Buffer;
  emailBox: Buffer | null;
  /** The receipt id sealed under the note key, for the read notification's receipt link (DECISIONS 12). */
  receiptBox?: Buffer | null;
}

export interface NoteSecrets {
  content: string;
  passcode: string | null;
  notificationEmail: string | null;
  /** Sealed only beside a notification e-mail, the one place it is needed when the note is read. */
  receiptId?: string | null;
}

/** The row's sealed fields opened with the right note key. */
export interface OpenedNote {
  content: string;
  notificationEmail: string | null;
  receiptId?: string | null;
}

export type OpenResult = { outcome: 'opened'; note: OpenedNote } | { outcome: 'wrong_passcode' };

/**
 * The row was changed behind our back (or its master key is gone from the ring): the check block
 * opened but a field did not, or a note without passcode fails its check. 500, nothing counted.
 */
export class NoteIntegrityError extends InternalError {
  constructor(readonly reason: string, cause?: unknown) {
    super(cause);
  }
}

export interface NoteCryptoOptions {
  masterKeys: KeyRing;
  lookupKey: Buffer;
  kdf?: ScryptParams;
}

/**
 * DECISIONS 1. The uuid is the bearer secret: the store sees only its HMAC, and the note key is
 * HKDF(master key, uuid [, scrypt(passcode)]), so neither a database copy nor the master key alone
 * opens a note. Every sealed field's associated data names the field, the row's lookup hash and the
 * key id, so a box cannot be moved to another row or another column.
 */
export class NoteCrypto {
  private readonly masterKeys: KeyRing;
  private readonly lookupKey: Buffer;
  private readonly kdf: ScryptParams;

  constructor(options: NoteCryptoOptions) {
    if (options.lookupKey.length < 32) throw new Error('the lookup key must be at least 32 bytes');
    this.masterKeys = options.masterKeys;
    this.lookupKey = options.lookupKey;
    this.kdf = options.kdf ?? PRODUCTION_SCRYPT_PARAMS;
  }

  /** A random RFC 4122 version-4 uuid, lowercase (122 CSPRNG bits). */
  newUuid(): string {
    return randomUUID();
  }

  /** The row key. Independent of the master key ring, so rotation never hides a note. */
  lookup(uuid: string): string {
    return createHmac('sha256', this.lookupKey).update(uuid.toLowerCase(), 'utf8').digest('hex');
  }

  /** A random reference for events, unrelated to the uuid (DECISIONS 7). */
  newNoteRef(): string {
    return randomBytes(16).toString('hex');
  }

  async seal(uuid: string, secrets: NoteSecrets): Promise<SealedNote> {
    const master = this.masterKeys.current;
    const lookup = this.lookup(uuid);
    const salt = randomBytes(SALT_BYTES);
    const kdf = secrets.passcode !== null ? formatKdf(this.kdf) : null;
    const key = await this.noteKey(master.material, uuid, salt, kdf, secrets.passcode);
    const aad = (field: SealedField) => associatedData(field, lookup, master.id);
    return {
      lookup,
      keyId: master.id,
      salt,
      kdf,
      checkBox: aeadSeal(key, CHECK_PLAINTEXT, aad('check')),
      contentBox: aeadSeal(key, Buffer.from(secrets.content, 'utf8'), aad('content')),
      emailBox: secrets.notificationEmail !== null
        ? aeadSeal(key, Buffer.from(secrets.notificationEmail, 'utf8'), aad('email'))
        : null,
      ...(secrets.receiptId && secrets.notificationEmail !== null
        ? { receiptBox: aeadSeal(key, Buffer.from(secrets.receiptId, 'utf8'), aad('receipt')) }
        : {}),
    };
  }

  /**
   * Opens a row with the uuid and passcode. A check block that does not open means a wrong
   * passcode when the note has one; anything else that fails to open is an integrity error.
   */
  async open(uuid: string, passcode: string | null, sealed: SealedNote): Promise<OpenResult> {
    const master = this.masterKeys.find(sealed.keyId);
    if (!master) throw new NoteIntegrityError(`master key "${sealed.keyId}" is not in the key ring`);
    const hasPasscode = sealed.kdf !== null;
    if (hasPasscode && passcode === null) return { outcome: 'wrong_passcode' };
    const key = await this.noteKey(master.material, uuid, sealed.salt, sealed.kdf, hasPasscode ? passcode : null);
    const aad = (field: SealedField) => associatedData(field, sealed.lookup, sealed.keyId);
    try {
      const check = aeadOpen(key, sealed.checkBox, aad('check'));
      if (!check.equals(CHECK_PLAINTEXT)) throw new Error('unexpected check block');
    } catch (err) {
      if (hasPasscode) return { outcome: 'wrong_passcode' };
      throw new NoteIntegrityError('check block does not open', err);
    }
    try {
      const content = aeadOpen(key, sealed.contentBox, aad('content')).toString('utf8');
      const notificationEmail = sealed.emailBox ? aeadOpen(key, sealed.emailBox, aad('email')).toString('utf8') : null;
      const receiptId = sealed.receiptBox ? aeadOpen(key, sealed.receiptBox, aad('receipt')).toString('utf8') : null;
      return { outcome: 'opened', note: { content, notificationEmail, ...(receiptId !== null ? { receiptId } : {}) } };
    } catch (err) {
      throw new NoteIntegrityError('a sealed field does not open although the check block does', err);
    }
  }

  /**
   * Seals and opens a throwaway note under the current master key: true when encryption works
   * (for readiness and the `encryption` heartbeat). Costs no scrypt.
   */
  async selfTest(): Promise<boolean> {
    try {
      const uuid = this.newUuid();
      const sealed = await this.seal(uuid, { content: 'self-test', passcode: null, notificationEmail: null });
      const opened = await this.open(uuid, null, sealed);
      return opened.outcome === 'opened' && opened.note.content === 'self-test';
    } catch {
      return false;
    }
  }

  private async noteKey(master: Buffer, uuid: string, salt: Buffer, kdf: string | null, passcode: string | null): Promise<Buffer> {
    const parts = [master, Buffer.from(uuid.toLowerCase(), 'utf8')];
    if (kdf !== null) {
      if (passcode === null) throw new Error('a passcode is required for this note');
      parts.push(await scryptAsync(passcode, salt, parseKdf(kdf)));
    }
    // Synchronous on purpose: one HKDF is a few microseconds, while the async form's trip through
    // the thread pool cost several times that in CPU per note (profiled under a create load).
    return Buffer.from(hkdfSync('sha256', Buffer.concat(parts), salt, kdf === null ? HKDF_INFO : `${HKDF_INFO}.passcode`, KEY_BYTES));
  }
}

export function associatedData(field: SealedField, lookup: string, keyId: string): Buffer {
  return Buffer.from(`${AAD_PREFIX}|${field}|${lookup}|${keyId}`, 'utf8');
}

export function formatKdf(params: ScryptParams): string {
  return `scrypt$${params.N}$${params.r}$${params.p}`;
}

export function parseKdf(text: string): ScryptParams {
  const match = /^scrypt\$(\d+)\$(\d+)\$(\d+)$/.exec(text);
  if (!match) throw new NoteIntegrityError(`unknown passcode KDF "${text}"`);
  return { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
}

function scryptAsync(passcode: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  // Memory need is 128 * N * r bytes; allow twice that so Node's default 32 MiB cap is not hit.
  const maxmem = 256 * params.N * params.r + 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(passcode.normalize('NFC'), salt, KEY_BYTES, { N: params.N, r: params.r, p: params.p, maxmem }, (err, key) => {
      if (err) reject(err);
      else resolve(key);
    });
  });
}

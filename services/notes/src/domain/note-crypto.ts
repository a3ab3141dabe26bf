import { createHmac, createSecretKey, hkdfSync, randomUUID, scrypt, timingSafeEqual, type KeyObject } from 'node:crypto';
import { AEAD_NONCE_BYTES, InternalError, aeadOpen, aeadSeal, RandomPool, type KeyRing } from '@vanish/common';
import { ScryptLimit } from './scrypt-limit';

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

/**
 * scrypt N=2^15, r=8, p=1: 32 MiB and about 100-200 ms of a core per derivation (measured: 116 ms of
 * CPU on this project's 2-core test machine, about 200 ms from start to end on it; a fast server core
 * takes less, but 50 ms is not to be counted on).
 */
export const PRODUCTION_SCRYPT_PARAMS: Readonly<ScryptParams> = Object.freeze({ N: 2 ** 15, r: 8, p: 1 });

/**
 * What a stored `kdf` may ask of the CPU and memory (a row is data, not trusted code): N a power
 * of two from 2^10 (the tests' cost) to 2^16, r 1-16, p 1-4, and at most 64 MiB (128·N·r bytes),
 * twice the production cost so that it can be raised once without a code change. A row asking for
 * more is refused before scrypt runs, as a tampered row (500, nothing counted).
 */
export const SCRYPT_BOUNDS = Object.freeze({ minLogN: 10, maxLogN: 16, maxR: 16, maxP: 4, maxMemoryBytes: 64 * 1024 * 1024 });

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const NOTE_REF_BYTES = 16;
/** Random bytes behind a receipt id (ReceiptIds.idFrom). */
export const RECEIPT_ID_BYTES = 32;
/** The most boxes one note seals: check, content, email, key_check, receipt. */
const MAX_BOXES = 5;
const NOTE_RANDOM_BYTES = SALT_BYTES + NOTE_REF_BYTES + RECEIPT_ID_BYTES + MAX_BOXES * AEAD_NONCE_BYTES;
/** 64 notes' random bytes per CSPRNG call (about 8 KiB). */
const noteRandomPool = new RandomPool(NOTE_RANDOM_BYTES * 64);
const CHECK_PLAINTEXT = Buffer.from('vanish.note-check.v1', 'utf8');
const HKDF_INFO = 'vanish.note-key.v1';
/** The key_check is sealed under a key of the uuid alone, so that a wrong fragment is told apart before any passcode. */
const KEY_CHECK_HKDF_INFO = 'vanish.note-key-check.v1';
const AAD_PREFIX = 'vanish.note.v1';

export type SealedField = 'check' | 'content' | 'email' | 'key_check' | 'receipt';

/**
 * Every random byte a new note needs, in one piece of a RandomPool: a CSPRNG call costs about as much for
 * 16 bytes as for 8 KiB, and a note took five (salt, note_ref, receipt id, a nonce per box), then one (6 µs,
 * 4 % of the all-in-one's HTTP thread under a create load). The parts never overlap, nor do two notes'
 * pieces; the uuid stays randomUUID's (node draws those from a pool already).
 */
export interface NoteRandom {
  /** HKDF (and scrypt) salt. */
  salt: Buffer;
  /** The note's reference for events (DECISIONS 7), hex. */
  noteRef: string;
  /** For ReceiptIds.idFrom. */
  receiptIdBytes: Buffer;
  /** One AES-GCM nonce per sealed box, AEAD_NONCE_BYTES each. */
  nonces: Buffer;
}

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
  /** DECISIONS 13: the sealed proof of the fragment key, for a note sealed by its writer; else null. */
  keyCheckBox?: Buffer | null;
  /** The receipt id sealed under the note key, for the read notification's receipt link (DECISIONS 12). */
  receiptBox?: Buffer | null;
}

export interface NoteSecrets {
  content: string;
  passcode: string | null;
  notificationEmail: string | null;
  /** DECISIONS 13: base64url(HMAC-SHA-256(K, ...)) from the writer, when the writer sealed the text. */
  keyCheck?: string | null;
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

/** The passcode KDF itself: node's scrypt unless a test counts or slows it. */
export type ScryptFunction = (passcode: string, salt: Buffer, params: ScryptParams, keyLength: number) => Promise<Buffer>;

export interface NoteCryptoOptions {
  masterKeys: KeyRing;
  lookupKey: Buffer;
  kdf?: ScryptParams;
  /** Caps concurrent scrypt work of this process; DEFAULT_SCRYPT_LIMIT when not given. */
  scryptLimit?: ScryptLimit;
  scrypt?: ScryptFunction;
}

/**
 * DECISIONS 1. The uuid is the bearer secret: the store sees only its HMAC, and the note key is
 * HKDF(master key, uuid [, scrypt(passcode)]), so neither a database copy nor the master key alone
 * opens a note. Every sealed field's associated data names the field, the row's lookup hash and the
 * key id, so a box cannot be moved to another row or another column.
 */
export class NoteCrypto {
  private readonly masterKeys: KeyRing;
  /** A KeyObject: node 24 checks a Buffer HMAC key the slow way (about 20 µs against 3 per lookup). */
  private readonly lookupKey: KeyObject;
  private readonly kdf: ScryptParams;
  private readonly scryptLimit: ScryptLimit;
  private readonly scrypt: ScryptFunction;

  constructor(options: NoteCryptoOptions) {
    if (options.lookupKey.length < 32) throw new Error('the lookup key must be at least 32 bytes');
    const kdf = options.kdf ?? PRODUCTION_SCRYPT_PARAMS;
    const outOfBounds = scryptParamsProblem(kdf);
    if (outOfBounds) throw new Error(`scrypt parameters out of bounds: ${outOfBounds}`);
    this.masterKeys = options.masterKeys;
    this.lookupKey = createSecretKey(options.lookupKey);
    this.kdf = kdf;
    this.scryptLimit = options.scryptLimit ?? new ScryptLimit();
    this.scrypt = options.scrypt ?? nodeScrypt;
  }

  /** A random RFC 4122 version-4 uuid, lowercase (122 CSPRNG bits). */
  newUuid(): string {
    return randomUUID();
  }

  /** The row key. Independent of the master key ring, so rotation never hides a note. */
  lookup(uuid: string): string {
    return createHmac('sha256', this.lookupKey).update(uuid.toLowerCase(), 'utf8').digest('hex');
  }

  /** The random parts of a new note (salt, note_ref for events unrelated to the uuid, receipt id, nonces). */
  newNoteRandom(): NoteRandom {
    const bytes = noteRandomPool.take(NOTE_RANDOM_BYTES);
    let offset = 0;
    const take = (length: number): Buffer => bytes.subarray(offset, (offset += length));
    return {
      salt: take(SALT_BYTES),
      noteRef: take(NOTE_REF_BYTES).toString('hex'),
      receiptIdBytes: take(RECEIPT_ID_BYTES),
      nonces: take(MAX_BOXES * AEAD_NONCE_BYTES),
    };
  }

  /** Seals with `random`'s salt and nonces; give the same NoteRandom whose note_ref and receipt id the note gets. */
  async seal(uuid: string, secrets: NoteSecrets, random: NoteRandom = this.newNoteRandom()): Promise<SealedNote> {
    const master = this.masterKeys.current;
    const lookup = this.lookup(uuid);
    const { salt } = random;
    const kdf = secrets.passcode !== null ? formatKdf(this.kdf) : null;
    const key = await this.noteKey(master.material, uuid, salt, kdf, secrets.passcode);
    const aad = (field: SealedField) => associatedData(field, lookup, master.id);
    let box = 0;
    const nonce = (): Buffer => random.nonces.subarray(box * AEAD_NONCE_BYTES, (box += 1) * AEAD_NONCE_BYTES);
    return {
      lookup,
      keyId: master.id,
      salt,
      kdf,
      checkBox: aeadSeal(key, CHECK_PLAINTEXT, aad('check'), nonce()),
      contentBox: aeadSeal(key, Buffer.from(secrets.content, 'utf8'), aad('content'), nonce()),
      emailBox: secrets.notificationEmail !== null
        ? aeadSeal(key, Buffer.from(secrets.notificationEmail, 'utf8'), aad('email'), nonce())
        : null,
      keyCheckBox: secrets.keyCheck
        ? aeadSeal(this.keyCheckKey(master.material, uuid, salt), Buffer.from(secrets.keyCheck, 'base64url'), aad('key_check'), nonce())
        : null,
      ...(secrets.receiptId && secrets.notificationEmail !== null
        ? { receiptBox: aeadSeal(key, Buffer.from(secrets.receiptId, 'utf8'), aad('receipt'), nonce()) }
        : {}),
    };
  }

  /**
   * DECISIONS 13: true when `given` is the key_check the writer stored (a constant-time compare after
   * opening the sealed one). Needs only the uuid, so a wrong fragment is refused before any passcode
   * work and counts toward no lock-out. A box that does not open is an integrity error.
   */
  matchesKeyCheck(uuid: string, given: string, sealed: SealedNote): boolean {
    if (!sealed.keyCheckBox) return true;
    const master = this.masterKeys.find(sealed.keyId);
    if (!master) throw new NoteIntegrityError(`master key "${sealed.keyId}" is not in the key ring`);
    let stored: Buffer;
    try {
      stored = aeadOpen(this.keyCheckKey(master.material, uuid, sealed.salt), sealed.keyCheckBox, associatedData('key_check', sealed.lookup, sealed.keyId));
    } catch (err) {
      throw new NoteIntegrityError('the key check does not open', err);
    }
    const offered = Buffer.from(given, 'base64url');
    return offered.length === stored.length && timingSafeEqual(offered, stored);
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
    if (sealed.salt.length !== SALT_BYTES) throw new NoteIntegrityError('salt length', new Error(`the stored salt is ${sealed.salt.length} bytes, not ${SALT_BYTES}`));
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

  private keyCheckKey(master: Buffer, uuid: string, salt: Buffer): KeyObject {
    return hkdfKey(Buffer.concat([master, Buffer.from(uuid.toLowerCase(), 'utf8')]), salt, KEY_CHECK_HKDF_INFO);
  }

  private async noteKey(master: Buffer, uuid: string, salt: Buffer, kdf: string | null, passcode: string | null): Promise<KeyObject> {
    const parts = [master, Buffer.from(uuid.toLowerCase(), 'utf8')];
    if (kdf !== null) {
      if (passcode === null) throw new Error('a passcode is required for this note');
      const params = parseKdf(kdf);
      parts.push(await this.scryptLimit.run(() => this.scrypt(passcode.normalize('NFC'), salt, params, KEY_BYTES)));
    }
    // Synchronous on purpose: one HKDF is a few microseconds, while the async form's trip through
    // the thread pool cost several times that in CPU per note (profiled under a create load).
    return hkdfKey(Buffer.concat(parts), salt, kdf === null ? HKDF_INFO : `${HKDF_INFO}.passcode`);
  }
}

/**
 * HKDF-SHA-256 to a 256-bit key, as KeyObjects in and out: node 24 checks Buffer keys the slow way
 * (hkdfSync and AES-GCM each cost several times more with them; measured under a create load).
 */
function hkdfKey(inputKeyMaterial: Buffer, salt: Buffer, info: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', createSecretKey(inputKeyMaterial), salt, info, KEY_BYTES)));
}

export function associatedData(field: SealedField, lookup: string, keyId: string): Buffer {
  return Buffer.from(`${AAD_PREFIX}|${field}|${lookup}|${keyId}`, 'utf8');
}

export function formatKdf(params: ScryptParams): string {
  return `scrypt$${params.N}$${params.r}$${params.p}`;
}

/**
 * The stored `scrypt$N$r$p`, checked against SCRYPT_BOUNDS: anything else is an integrity error,
 * raised before any derivation runs. The message names the parameters, never the note.
 */
export function parseKdf(text: string): ScryptParams {
  const match = /^scrypt\$(\d{1,9})\$(\d{1,4})\$(\d{1,4})$/.exec(text);
  if (!match) throw new NoteIntegrityError('passcode KDF', new Error(`unknown passcode KDF "${text.slice(0, 40)}"`));
  const params = { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  const problem = scryptParamsProblem(params);
  if (problem) throw new NoteIntegrityError('passcode KDF', new Error(`stored scrypt parameters refused (${problem}): ${text}`));
  return params;
}

/** Why `params` are outside SCRYPT_BOUNDS, or null when they are inside. */
export function scryptParamsProblem({ N, r, p }: ScryptParams): string | null {
  const { minLogN, maxLogN, maxR, maxP, maxMemoryBytes } = SCRYPT_BOUNDS;
  if (!Number.isInteger(N) || N < 2 ** minLogN || N > 2 ** maxLogN || (N & (N - 1)) !== 0) return `N must be a power of two from 2^${minLogN} to 2^${maxLogN}`;
  if (!Number.isInteger(r) || r < 1 || r > maxR) return `r must be 1 to ${maxR}`;
  if (!Number.isInteger(p) || p < 1 || p > maxP) return `p must be 1 to ${maxP}`;
  if (128 * N * r > maxMemoryBytes) return `128·N·r must be at most ${maxMemoryBytes} bytes`;
  return null;
}

function nodeScrypt(passcode: string, salt: Buffer, params: ScryptParams, keyLength: number): Promise<Buffer> {
  // Memory need is 128 * N * r bytes; allow twice that so Node's default 32 MiB cap is not hit.
  const maxmem = 256 * params.N * params.r + 1024 * 1024;
  return new Promise((resolve, reject) => {
    scrypt(passcode, salt, keyLength, { N: params.N, r: params.r, p: params.p, maxmem }, (err, key) => {
      if (err) reject(err);
      else resolve(key);
    });
  });
}

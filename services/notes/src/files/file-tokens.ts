import { createHmac, hkdfSync, randomBytes } from 'node:crypto';

/** A bearer token of a file (upload or download): 256 random bits, base64url (43 characters). */
export const FILE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/**
 * The bearer tokens of files (DECISIONS 14): random, handed out once, stored only as a keyed hash
 * (HMAC-SHA-256 under a key derived from the lookup key for this purpose alone, and apart per kind),
 * so a copy of the database opens no upload and no download. Object names are random too, and
 * unrelated to any token, uuid, note_ref or receipt.
 */
export class FileTokens {
  private readonly key: Buffer;

  constructor(lookupKey: Buffer) {
    this.key = Buffer.from(hkdfSync('sha256', lookupKey, Buffer.alloc(0), 'vanish file tokens v1', 32));
  }

  newToken(): string {
    return randomBytes(32).toString('base64url');
  }

  /** The object name in the store: 128 random bits, hex (safe as a file name and an S3 key). */
  newObjectName(): string {
    return randomBytes(16).toString('hex');
  }

  keyOf(kind: 'upload' | 'download', token: string): string {
    return createHmac('sha256', this.key).update(`${kind}\0${token}`).digest('hex');
  }
}

/**
 * The storage port for files (DECISIONS 14, issue 33). Two adapters implement it: the local file system
 * under DATA_DIR (the embedded default) and S3-compatible object storage. Object names are random and
 * unrelated to any token, uuid, note_ref or receipt; the caller chooses them (the tus upload id).
 */
import type { Readable } from 'node:stream';
import type { DataStore } from '@tus/utils'; // the tus server's store interface

export interface StoredObject {
  name: string;
  size: number;
  complete: boolean;
  modifiedAt: Date;
}

export interface FileStorage {
  readonly kind: 'fs' | 's3';
  /** The tus DataStore that receives uploads into this storage; object name = tus upload id. */
  tusDataStore(): DataStore;
  /** Bytes [start, end] inclusive (or all) of a COMPLETE object, as a stream with bounded memory. */
  read(name: string, range?: { start: number; end: number }): Promise<Readable>;
  /** The object's state, or null when nothing of it is stored. */
  stat(name: string): Promise<StoredObject | null>;
  /** Removes the object and every part of it (incomplete multipart, .info files). Idempotent. */
  delete(name: string): Promise<void>;
  /** Every object (complete or not) in the store, for the sweep. */
  list(): AsyncIterable<StoredObject>;
  /** Pre-creates an empty upload of the declared size (what the tus "creation" would do). */
  createUpload(name: string, size: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * What the adapters throw (additive to the files contract): `read` of a name with nothing complete
 * stored, and a range that does not lie inside the object. Callers map them to 404/409 and 416.
 */
export class StoredObjectNotFoundError extends Error {
  constructor(readonly objectName: string, readonly incomplete = false) {
    super(incomplete ? 'the stored object is not complete yet' : 'no stored object of that name');
    this.name = 'StoredObjectNotFoundError';
  }
}

export class StoredRangeError extends Error {
  constructor(readonly range: { start: number; end: number }, readonly size: number) {
    super(`bytes ${range.start}-${range.end} do not lie inside an object of ${size} bytes`);
    this.name = 'StoredRangeError';
  }
}

import type { ClientClass } from '../domain/ports';

/** One declared file of a new note, stored with the note in its creation transaction. */
export interface NewNoteFile {
  objectName: string;
  /** 0-based, in the order of the creation's `files` (the manifest's order). */
  position: number;
  /** Keyed hash of the upload token (FileTokens.keyOf('upload', …)). */
  uploadKey: string;
  /** Declared ciphertext bytes. */
  size: number;
}

export type UploadState = 'uploading' | 'complete';

/** An upload found by its token's keyed hash, while its note lives. */
export interface UploadRecord {
  objectName: string;
  size: number;
  state: UploadState;
  createdAt: Date;
}

/** A file of a live note, in position order. */
export interface NoteFile {
  objectName: string;
  position: number;
  size: number;
  state: UploadState;
}

/** One download address issued by a reveal (inserted in the reveal's transaction). */
export interface IssuedDownload {
  downloadKey: string;
  objectName: string;
  size: number;
}

export interface DownloadRecord {
  objectName: string;
  noteRef: string;
  size: number;
  expiresAt: Date;
}

/** The database side of files (the notes database; the bytes are in FileStorage). */
export interface FileRecords {
  /** The upload whose token hashes to `uploadKey`, when its note still lives at `now`. */
  findUpload(uploadKey: string, now: Date): Promise<UploadRecord | null>;
  /** uploading → complete; true when this call changed it. */
  markComplete(objectName: string): Promise<boolean>;
  /** The files of a note (its row may be gone), position order. */
  filesOf(noteLookup: string): Promise<NoteFile[]>;
  findDownload(downloadKey: string): Promise<DownloadRecord | null>;
  /** A download start on the note's receipt (when it has one), bounded per note. */
  recordDownload(noteRef: string, at: Date, client: ClientClass): Promise<void>;
  /** Objects whose note is gone and whose download window has passed at `now`. */
  endedObjects(now: Date, limit: number): Promise<string[]>;
  /** Notes whose files are not all uploaded and that were created at or before `before`. */
  abandonedNotes(before: Date, limit: number): Promise<string[]>;
  /** Of `names`, those that have a row (a live or ending note's file). */
  knownObjects(names: readonly string[]): Promise<Set<string>>;
  /** Deletes the file's row and its download rows (after its bytes were deleted). */
  forget(objectName: string): Promise<void>;
  /** Deletes download rows that expired at or before `before`; returns how many. */
  purgeDownloads(before: Date): Promise<number>;
  /** Bytes of complete uploads and the number of uploads in progress (metrics). */
  totals(): Promise<{ bytesStored: number; uploadsInProgress: number }>;
}

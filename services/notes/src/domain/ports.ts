import type { ExpiryType, OutgoingMessage } from '@vanish/common';

/** A note as stored: secrets sealed (see NoteCrypto), counters and times in clear. */
export interface NoteRecord {
  /** HMAC of the uuid: the primary key. */
  lookup: string;
  /** Opaque random reference used in events (never the uuid nor its HMAC). */
  noteRef: string;
  keyId: string;
  salt: Buffer;
  kdf: string | null;
  checkBox: Buffer;
  contentBox: Buffer;
  emailBox: Buffer | null;
  hasPasscode: boolean;
  expiryType: ExpiryType;
  maxViews: number;
  currentViews: number;
  failedAttempts: number;
  createdAt: Date;
  /** Time expiry for `time`/`both`, the retention deadline for `view`. */
  expiresAt: Date;
  /** DECISIONS 11: the webhook URL and secret sealed to the webhooks service; null without a webhook. */
  webhookBox?: string | null;
}

/** The counters of a note, read under the row lock inside a transaction. */
export interface NoteState {
  noteRef: string;
  expiryType: ExpiryType;
  maxViews: number;
  currentViews: number;
  failedAttempts: number;
  expiresAt: Date;
  /** The sealed webhook target (DECISIONS 11), for the note's events; null or absent without one. */
  webhookBox?: string | null;
}

/** A note whose expires_at has passed, as listed for the sweeper. */
export interface ExpiredNote {
  lookup: string;
  expiryType: ExpiryType;
}

/**
 * Operations inside one database transaction: either all of them commit (note change and outbox
 * rows together) or none does. Every counter change is a conditional UPDATE, never read-then-write.
 */
export interface NoteTransaction {
  insert(note: NoteRecord): Promise<void>;
  /** current_views + 1 when the note exists, is unexpired at `now` and current_views < max_views. */
  claimView(lookup: string, now: Date): Promise<boolean>;
  /** failed_attempts + 1 when the note exists and is unexpired at `now`. */
  countFailedAttempt(lookup: string, now: Date): Promise<boolean>;
  /** Locks the row for the rest of the transaction and reads its counters (null when gone). */
  lock(lookup: string): Promise<NoteState | null>;
  /** Erases the row (ciphertext, sealed e-mail and all); false when it was already gone. */
  delete(lookup: string): Promise<boolean>;
  /** Appends to the transactional outbox. */
  enqueue(messages: readonly OutgoingMessage[]): Promise<void>;
}

export interface NoteStore {
  /** The note when it exists and `now` is before its expires_at; never changes anything. */
  findActive(lookup: string, now: Date): Promise<NoteRecord | null>;
  /** Up to `limit` notes whose expires_at is at or before `now`, oldest first. */
  findExpired(now: Date, limit: number): Promise<ExpiredNote[]>;
  /**
   * Stores a new note and its outbox messages: both commit together or neither does. Separate from
   * `transaction` so that a store may commit concurrent creations together (group commit).
   */
  insertNew(note: NoteRecord, messages: readonly OutgoingMessage[]): Promise<void>;
  /** Runs `work` in one transaction; a throw rolls everything back. */
  transaction<T>(work: (tx: NoteTransaction) => Promise<T>): Promise<T>;
  /** True when the database answers. */
  ping(): Promise<boolean>;
}

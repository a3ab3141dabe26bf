import type { ExpiryType, OutgoingMessage } from '@vanish/common';
import type { IssuedDownload, NewNoteFile, NoteFile } from '../files/ports';

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
  /** DECISIONS 13: set for a note its writer sealed (see NoteCrypto.matchesKeyCheck). */
  keyCheckBox?: Buffer | null;
  hasPasscode: boolean;
  expiryType: ExpiryType;
  maxViews: number;
  currentViews: number;
  /** Wrong passcodes checked and counted. */
  failedAttempts: number;
  /** Passcode checks reserved and not yet settled (see NoteStore.reserveAttempt). */
  attemptsInFlight: number;
  /** When the latest reservation's check is presumed dead; epoch 0 when none was ever made. */
  attemptsReservedUntil: Date;
  createdAt: Date;
  /** Time expiry for `time`/`both`, the retention deadline for `view`. */
  expiresAt: Date;
  /** Keyed hash of the note's receipt id (DECISIONS 12); absent for a note made without a receipt. */
  receiptKey?: string;
  /** The receipt id sealed under the note key (only beside a notification e-mail). */
  receiptBox?: Buffer | null;
  /** DECISIONS 11: the webhook URL and secret sealed to the webhooks service; null without a webhook. */
  webhookBox?: string | null;
  /** DECISIONS 14: the note's declared files (only at creation; stored in note_files with the note). */
  files?: readonly NewNoteFile[];
  /** DECISIONS 14: how many files the note has, and how many are still being uploaded. */
  fileCount?: number;
  filesPending?: number;
}

/** The counters of a note, read under the row lock inside a transaction. */
export interface NoteState {
  noteRef: string;
  expiryType: ExpiryType;
  maxViews: number;
  currentViews: number;
  failedAttempts: number;
  attemptsInFlight: number;
  attemptsReservedUntil: Date;
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
  /**
   * current_views + 1 when the note exists, is unexpired at `now` and current_views < max_views (and,
   * DECISIONS 14, none of its files is still being uploaded).
   */
  claimView(lookup: string, now: Date): Promise<boolean>;
  /**
   * Settles a reserved attempt as wrong: failed_attempts + 1 and attempts_in_flight - 1, when the
   * note exists and is unexpired at `now`.
   */
  countFailedAttempt(lookup: string, now: Date): Promise<boolean>;
  /** Gives a reserved attempt back (the passcode was right, or it could not be checked). */
  refundAttempt(lookup: string): Promise<void>;
  /** Counts `count` reservations whose checks died as failed: failed_attempts + count, attempts_in_flight - count. */
  countAbandonedAttempts(lookup: string, count: number): Promise<void>;
  /** Locks the row for the rest of the transaction and reads its counters (null when gone). */
  lock(lookup: string): Promise<NoteState | null>;
  /** Erases the row (ciphertext, sealed e-mail and all); false when it was already gone. */
  delete(lookup: string): Promise<boolean>;
  /** Appends to the transactional outbox. */
  enqueue(messages: readonly OutgoingMessage[]): Promise<void>;
  /**
   * Appends to the note's receipt timeline (DECISIONS 12) in this transaction; an `end` entry also
   * marks the receipt ended, which starts its retention. A note without a receipt records nothing.
   */
  recordReceipt(entries: readonly ReceiptEntry[]): Promise<void>;
  /** DECISIONS 14: the note's files, position order (absent in stores that keep no files). */
  filesOf?(lookup: string): Promise<NoteFile[]>;
  /**
   * DECISIONS 14: stores the download addresses a reveal hands out (keyed hashes) and holds the note's
   * bytes until `expiresAt`, even if the note ends before.
   */
  issueDownloads?(lookup: string, noteRef: string, downloads: readonly IssuedDownload[], expiresAt: Date): Promise<void>;
}

/** How a note ended, as its receipt and its end event say (DECISIONS 7, 12). */
export type NoteEndReason = 'views' | 'lockout' | 'takedown' | 'creator' | 'time' | 'retention';

/** A coarse class of the client that fetched the note page: never the user agent itself. */
export type ClientClass = 'link_preview_bot' | 'browser' | 'other';

/** One row of a receipt's timeline: no address, no user agent, no uuid, no content. */
export type ReceiptEntry =
  | { noteRef: string; at: Date; kind: 'reveal' }
  | { noteRef: string; at: Date; kind: 'wrong_passcode' }
  | { noteRef: string; at: Date; kind: 'page_fetch'; client: ClientClass }
  /** DECISIONS 14: a file download started (a GET from its first byte). */
  | { noteRef: string; at: Date; kind: 'file_download'; client: ClientClass }
  | { noteRef: string; at: Date; kind: 'end'; reason: NoteEndReason };

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
  /**
   * Reserves one passcode check before it runs, committed at once, so that replicas see it:
   * attempts_in_flight + 1 and attempts_reserved_until = `until` when the note exists, is
   * unexpired at `now` and failed_attempts + attempts_in_flight < `limit`. False when refused
   * (gone, or every attempt counted or under way). The reservation is settled in a transaction by
   * countFailedAttempt, refundAttempt or, once `until` has passed, countAbandonedAttempts.
   */
  reserveAttempt(lookup: string, now: Date, limit: number, until: Date): Promise<boolean>;
  /** Runs `work` in one transaction; a throw rolls everything back. */
  transaction<T>(work: (tx: NoteTransaction) => Promise<T>): Promise<T>;
  /** True when the database answers. */
  ping(): Promise<boolean>;
}

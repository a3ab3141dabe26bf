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
  /** DECISIONS 16 (absent or null: none of them): see NoteTimeControls. */
  controls?: NoteTimeControls;
  /** DECISIONS 14: the note's declared files (only at creation; stored in note_files with the note). */
  files?: readonly NewNoteFile[];
  /** DECISIONS 14: how many files the note has, and how many are still being uploaded. */
  fileCount?: number;
  filesPending?: number;
}

/**
 * DECISIONS 16, the creator's time controls as stored. `releaseAt` is when the note opens: a fixed
 * time (available_from), or for a dead-man's switch the end of the current silence period, which each
 * check-in moves forward. Nothing can consume a view or count a lock-out before it.
 */
export interface NoteTimeControls {
  /** shrink_after_first_view_minutes. */
  shrinkMinutes: number | null;
  /** When the first view shrank expires_at (at most once). */
  shrunkAt: Date | null;
  releaseAt: Date | null;
  /** release_after_silence_hours: set for a dead-man's switch. */
  silenceHours: number | null;
  /** When the release was announced (its link e-mail and `note.released` enqueued), at most once. */
  releasedAt: Date | null;
  /** The link e-mail as an outbox message, sealed to the mailer at creation, sent at the release. */
  releaseMail: string | null;
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
  /** DECISIONS 16 (absent: a store that predates them, read as none). */
  controls?: NoteTimeControls;
}

/** A note whose release time has come and whose release is not announced yet (DECISIONS 16). */
export interface DueRelease {
  lookup: string;
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
   * current_views + 1 when the note exists, is unexpired at `now`, is released at `now` (DECISIONS 16:
   * no release_at, or release_at at or before `now`), current_views < max_views and (DECISIONS 14) none of
   * its files is still being uploaded. In the same UPDATE, the first view of a note with shrink_minutes
   * sets expires_at to the earlier of itself and `now` + shrink_minutes, and shrunk_at to `now`.
   */
  claimView(lookup: string, now: Date): Promise<boolean>;
  /**
   * DECISIONS 16: marks the release announced (released_at = `now`) when release_at is at or before
   * `now` and it was not announced yet; false otherwise (another replica did it, or not due).
   */
  markReleased(lookup: string, now: Date): Promise<boolean>;
  /**
   * DECISIONS 16, a check-in: release_at = `next` for a dead-man's switch that is still held at `now`
   * (release_at after `now`) and unexpired; false otherwise (released, ended, no switch).
   */
  checkIn(lookup: string, now: Date, next: Date): Promise<boolean>;
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
  /** `releaseDigest`: the release manifest's digest the service served at that reveal (DECISIONS 17). */
  | { noteRef: string; at: Date; kind: 'reveal'; releaseDigest?: string }
  | { noteRef: string; at: Date; kind: 'wrong_passcode' }
  | { noteRef: string; at: Date; kind: 'page_fetch'; client: ClientClass }
  | { noteRef: string; at: Date; kind: 'end'; reason: NoteEndReason }
  /** DECISIONS 14: a file download started (a GET from its first byte). */
  | { noteRef: string; at: Date; kind: 'file_download'; client: ClientClass }
  /** DECISIONS 16: the first view shrank the note's expiry to `expiresAt` (the receipt's expires_at follows). */
  | { noteRef: string; at: Date; kind: 'shrink'; expiresAt: Date }
  /** DECISIONS 16: the creator checked in; the switch now opens at `releaseAt` unless they check in again. */
  | { noteRef: string; at: Date; kind: 'checkin'; releaseAt: Date }
  /** DECISIONS 16: the note opened at `at`; its release was announced (e-mail, note.released) at `announcedAt`. */
  | { noteRef: string; at: Date; kind: 'release'; announcedAt: Date };

export interface NoteStore {
  /** The note when it exists and `now` is before its expires_at; never changes anything. */
  findActive(lookup: string, now: Date): Promise<NoteRecord | null>;
  /** Up to `limit` notes whose expires_at is at or before `now`, oldest first. */
  findExpired(now: Date, limit: number): Promise<ExpiredNote[]>;
  /** DECISIONS 16: up to `limit` unexpired notes whose release_at is at or before `now` and not announced yet. */
  findDueReleases(now: Date, limit: number): Promise<DueRelease[]>;
  /**
   * Stores a new note and its outbox messages: both commit together or neither does. Separate from
   * `transaction` so that a store may commit concurrent creations together (group commit).
   */
  insertNew(note: NoteRecord, messages: readonly OutgoingMessage[]): Promise<void>;
  /**
   * Reserves one passcode check before it runs, committed at once, so that replicas see it:
   * attempts_in_flight + 1 and attempts_reserved_until = `until` when the note exists, is
   * unexpired and released at `now` and failed_attempts + attempts_in_flight < `limit`. False when refused
   * (gone, or every attempt counted or under way). The reservation is settled in a transaction by
   * countFailedAttempt, refundAttempt or, once `until` has passed, countAbandonedAttempts.
   */
  reserveAttempt(lookup: string, now: Date, limit: number, until: Date): Promise<boolean>;
  /** Runs `work` in one transaction; a throw rolls everything back. */
  transaction<T>(work: (tx: NoteTransaction) => Promise<T>): Promise<T>;
  /** True when the database answers. */
  ping(): Promise<boolean>;
}

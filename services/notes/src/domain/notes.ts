import type { ExpiryType } from '@vanish/common';
import type { RequestAccess } from './note-webhooks';

/**
 * The notes domain as its entry points (HTTP API, web pages, operator commands) see it.
 * Times are Dates (UTC); the HTTP layer formats them.
 */
export interface CreateNoteInput {
  /** The text, or (DECISIONS 13) the envelope the writer's machine sealed. */
  content: string;
  /** DECISIONS 13: the proof of the fragment's key for a note sealed by the writer; null for text. */
  keyCheck?: string | null;
  expiryType: ExpiryType;
  /** Hours until expiry, 1..8760 (validated; only used for `time` and `both`). */
  expiryHours: number;
  /** 1..100 (validated); replaced by 100 for `time` notes (DECISIONS 3). */
  maxViews: number;
  passcode: string | null;
  notificationEmail: string | null;
  sendLinkEmail: string | null;
  /** DECISIONS 11: where this note's events are sent (syntax checked; addresses checked at creation). */
  webhookUrl?: string | null;
  /**
   * DECISIONS 15: a webhook target already registered and sealed (a request's, for its submissions): the
   * note's events go there, and no new secret is made or answered.
   */
  webhookTarget?: string | null;
  /** The language of the page that created the note (issue 20): its link e-mail is written in it. Absent: English. */
  lang?: string;
  /** DECISIONS 16: the first reveal ends the note at most this many minutes later. */
  shrinkAfterFirstViewMinutes?: number;
  /** DECISIONS 16: nothing can open the note before this time. */
  availableFrom?: Date;
  /** DECISIONS 16: a dead-man's switch; held while the creator checks in within this many hours. */
  releaseAfterSilenceHours?: number;
  /** DECISIONS 14: the ciphertext sizes of the note's files (only with keyCheck); absent: no files. */
  files?: ReadonlyArray<{ size: number }>;
}

/** DECISIONS 16: where a gated note stands; `released` once its time has come. */
export type ReleaseState = 'scheduled' | 'held' | 'released';

/** DECISIONS 16, as the creation answer, metadata and pages say it; each absent when not set. */
export interface TimeControlsView {
  shrinkAfterFirstViewMinutes?: number;
  /** A fixed release time (available_from). */
  availableFrom?: Date;
  releaseAfterSilenceHours?: number;
  /** Only for a gated note. */
  releaseState?: ReleaseState;
}

export interface CreatedNote {
  uuid: string;
  url: string;
  expiryType: ExpiryType;
  expiresAt: Date;
  maxViews: number;
  hasPasscode: boolean;
  createdAt: Date;
  /** `{PUBLIC_BASE_URL}/r/{receipt_id}`: the creator's receipt (DECISIONS 12), shown once. */
  receiptUrl?: string;
  /** DECISIONS 11: the note's public reference, carried by every webhook payload. */
  noteRef?: string;
  /** DECISIONS 11: the webhook's signing secret (`whsec_…`), shown once; only with a webhook_url. */
  webhookSecret?: string;
  /** DECISIONS 16: the time controls given at creation. */
  controls?: TimeControlsView;
  /** DECISIONS 14: one upload address per declared file, in their order. */
  uploads?: Array<{ url: string; size: number }>;
}

export interface NoteMetadata {
  hasPasscode: boolean;
  /** DECISIONS 13: sealed by its writer (the pages need to know; the API does not say). */
  clientEncrypted?: boolean;
  expiryType: ExpiryType;
  expiresAt: Date;
  maxViews: number;
  currentViews: number;
  createdAt: Date;
  /** DECISIONS 16 (additive; absent for a note made without them). */
  controls?: TimeControlsView;
  /** DECISIONS 14: how many files the note carries, and whether any is still being uploaded. */
  fileCount?: number;
  uploading?: boolean;
}

/** DECISIONS 14: a download address handed out by a reveal, valid for FILE_DOWNLOAD_WINDOW_MINUTES. */
export interface RevealedFile {
  url: string;
  /** Ciphertext bytes. */
  size: number;
}

export type RevealResult =
  /** `clientEncrypted`: content is the writer's envelope, opened by the page with the link's fragment (DECISIONS 13). */
  | { outcome: 'revealed'; content: string; clientEncrypted: boolean; currentViews: number; maxViews: number; destroyed: boolean; files?: RevealedFile[] }
  /** DECISIONS 14: a file of the note is still being uploaded: nothing claimed, nothing counted. */
  | { outcome: 'upload_incomplete' }
  /** DECISIONS 13: a note sealed by its writer, asked for without the proof of the fragment key: nothing consumed. */
  | { outcome: 'key_required' }
  | { outcome: 'wrong_passcode'; attemptsLeft: number; lockedOut: boolean }
  /** Every attempt left is being checked right now; this guess was not checked nor counted. */
  | { outcome: 'attempts_busy' }
  /** DECISIONS 16: not released yet; nothing consumed, nothing counted. `opensAt` null: a switch, held. */
  | { outcome: 'not_yet'; opensAt: Date | null }
  | { outcome: 'not_found' };

export interface RevealOptions {
  /** DECISIONS 15: the reveal of a request's submission from its inbox: the note's events carry no note_id. */
  withoutNoteId?: boolean;
}

export interface NotesApi {
  create(input: CreateNoteInput): Promise<CreatedNote>;
  /** Never changes current_views. Throws NoteNotFoundError for unknown, destroyed and expired notes alike. */
  metadata(uuid: string): Promise<NoteMetadata>;
  /**
   * Checks the passcode (a decryption), claims one view atomically, destroys at max_views, and
   * returns the content only after the claim committed. Tampered rows throw (500, no view counted).
   */
  reveal(uuid: string, passcode: string | null, keyCheck?: string | null, access?: RequestAccess, options?: RevealOptions): Promise<RevealResult>;
  /** Operator takedown of a reported link: note.destroyed with reason `takedown`. */
  takedown(uuid: string): Promise<boolean>;
}

import type { ExpiryType, OutgoingMessage } from '@vanish/common';

/** A request as stored (DECISIONS 15): no id, no private key, no label or address in clear. */
export interface StoredRequest {
  /** Keyed hash of the request id: the row's key. */
  requestKey: string;
  /** Keyed hash of the inbox id. */
  inboxKey: string;
  /** The request's own reference, carried by its webhook events; opens nothing. */
  requestRef: string;
  /** Master key the boxes were sealed under (rotation). */
  keyId: string;
  /** The requester's X25519 public key (base64url): what senders seal to. */
  publicKey: string;
  /** The public key the inbox's boxes are sealed to; its private half is derived from the inbox id. */
  inboxSealKey: string;
  /** Label, allowed origins, notification address: sealed under a key of the request id. */
  settingsBox: Buffer;
  /** The request id sealed to the inbox. */
  requestIdBox: string;
  /** DECISIONS 11: the webhook target sealed to the webhooks service; null without one. */
  webhookBox: string | null;
  allowFiles: boolean;
  expiryType: ExpiryType;
  expiryHours: number;
  maxViews: number;
  maxSubmissions: number;
  submissions: number;
  createdAt: Date;
  expiresAt: Date;
  closedAt: Date | null;
}

/** One submission's row: a note of the inbox, its state read from the note's row. */
export interface StoredSubmission {
  number: number;
  noteLookup: string;
  /** The note's uuid sealed to the inbox. */
  uuidBox: string;
  /** The sender's ephemeral X25519 public key: with the requester's private key it gives the note key. */
  ephemeralKey: string;
  size: number;
  createdAt: Date;
  noteExpiresAt: Date;
  openedAt: Date | null;
  /** Read from the note's row: true while it can still be revealed. */
  noteActive: boolean;
}

export interface NewSubmission {
  requestKey: string;
  number: number;
  noteLookup: string;
  uuidBox: string;
  ephemeralKey: string;
  size: number;
  createdAt: Date;
  noteExpiresAt: Date;
}

export interface RequestStore {
  insert(request: StoredRequest): Promise<void>;
  findByRequestKey(requestKey: string): Promise<StoredRequest | null>;
  findByInboxKey(inboxKey: string): Promise<StoredRequest | null>;
  /**
   * Takes the next submission slot when the request is open at `now` (not closed, under its count, before its
   * date): one conditional UPDATE. The slot's number, or null when refused.
   */
  claimSlot(requestKey: string, now: Date): Promise<number | null>;
  /** Gives back a slot whose note could not be made. */
  releaseSlot(requestKey: string): Promise<void>;
  /** The submission's row and its outbox messages (e-mail, webhook event), in one transaction. */
  recordSubmission(submission: NewSubmission, messages: readonly OutgoingMessage[]): Promise<void>;
  /** The request's submissions, oldest first, each with its note's state at `now`. */
  submissions(requestKey: string, now: Date): Promise<StoredSubmission[]>;
  submission(requestKey: string, number: number, now: Date): Promise<StoredSubmission | null>;
  markOpened(requestKey: string, number: number, now: Date): Promise<void>;
  /** Closes an open request early; false when it was closed already. */
  close(requestKey: string, now: Date): Promise<boolean>;
  /** Deletes up to `limit` requests (and their submission rows) whose date or closing is at or before `before`. */
  purgeEnded(before: Date, limit: number): Promise<number>;
}

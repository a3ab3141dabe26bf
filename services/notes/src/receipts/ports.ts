import type { ExpiryType } from '@vanish/common';
import type { ClientClass, NoteEndReason } from '../domain/ports';

/** A receipt as stored (DECISIONS 12): settings of the note and how it ended, never a secret. */
export interface StoredReceipt {
  noteRef: string;
  expiryType: ExpiryType;
  maxViews: number;
  hasPasscode: boolean;
  createdAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
  endReason: NoteEndReason | null;
}

/** One timeline row as read back, oldest first. */
export interface StoredReceiptEvent {
  at: Date;
  kind: 'reveal' | 'wrong_passcode' | 'page_fetch' | 'file_download' | 'end';
  client: ClientClass | null;
  reason: NoteEndReason | null;
}

export interface ReceiptStore {
  /** The receipt and its timeline, or null: one primary-key read either way when there is none. */
  find(receiptKey: string): Promise<{ receipt: StoredReceipt; events: StoredReceiptEvent[] } | null>;
  /** Records a non-consuming fetch of the note page when the note is active and has a receipt. */
  recordPageFetch(noteLookup: string, now: Date, client: ClientClass): Promise<void>;
  /** The note's lookup key while its row exists (ending it from the receipt locks that row). */
  noteLookupOf(noteRef: string): Promise<string | null>;
  /**
   * Deletes up to `limit` receipts (and their timelines) that ended at or before `endedBefore`, or
   * that recorded no end and whose note's deadline (expires_at) is at or before it.
   */
  purgeEnded(endedBefore: Date, limit: number): Promise<number>;
}

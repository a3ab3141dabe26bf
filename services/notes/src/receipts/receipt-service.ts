import type { NoteWebhooks } from '../domain/note-webhooks';
import { formatTimestamp, type Clock, type Logger } from '@vanish/common';
import { noteEventMessage, notifyObserver, type NoteEventsObserver } from '../domain/note-events';
import type { ClientClass, NoteEndReason, NoteStore } from '../domain/ports';
import type { NoteCrypto } from '../domain/note-crypto';
import { classifyClient } from './client-class';
import { RECEIPT_ID, type ReceiptIds } from './receipt-ids';
import type { ReceiptSigner, SignedReceipt } from './receipt-signer';
import type { ReceiptStore, StoredReceipt, StoredReceiptEvent } from './ports';

const HOUR_MS = 3_600_000;

export type ReceiptTimelineEntry =
  | { at: string; event: 'created' | 'reveal' | 'wrong_passcode' }
  | { at: string; event: 'page_fetch'; client: ClientClass }
  /** DECISIONS 14: a download of one of the note's files started. */
  | { at: string; event: 'file_download'; client: ClientClass }
  | { at: string; event: 'end'; reason: NoteEndReason };

/** What a receipt says (DECISIONS 12), as the JSON answer and the page show it. Times as DECISIONS 2. */
export interface ReceiptBody {
  version: 1;
  issuer: string;
  note_ref: string;
  created_at: string;
  expiry_type: string;
  max_views: number;
  has_passcode: boolean;
  expires_at: string;
  views_used: number;
  views_left: number;
  status: 'active' | 'ended';
  ended_at: string | null;
  end_reason: NoteEndReason | null;
  /** When the receipt itself is purged (its note's end + NOTE_RETENTION_HOURS); null while the note lives. */
  purge_after: string | null;
  timeline: ReceiptTimelineEntry[];
  issued_at: string;
}

export type EndNowOutcome = 'ended' | 'already_ended' | 'not_found';

export interface ReceiptServiceOptions {
  store: NoteStore;
  receipts: ReceiptStore;
  ids: ReceiptIds;
  noteCrypto: Pick<NoteCrypto, 'lookup'>;
  signer: ReceiptSigner;
  clock: Clock;
  publicBaseUrl: string;
  retentionHours: number;
  logger: Logger;
  events?: NoteEventsObserver;
  /** DECISIONS 11: an end by the creator reaches the note's webhook like every other end. */
  webhooks?: Pick<NoteWebhooks, 'attach'>;
}

/**
 * The creator's side of a note (DECISIONS 12): reads a receipt (never the note's content, never
 * a view), signs it, records fetches of the note page, and ends a note on the creator's word.
 */
export class ReceiptService {
  private readonly retentionMs: number;
  private readonly issuer: string;

  constructor(private readonly options: ReceiptServiceOptions) {
    this.retentionMs = options.retentionHours * HOUR_MS;
    this.issuer = options.publicBaseUrl.replace(/\/+$/, '');
  }

  /** The receipt, or null for every id that names none (unknown, purged, malformed) alike. */
  async read(receiptId: string): Promise<ReceiptBody | null> {
    if (!RECEIPT_ID.test(receiptId)) return null;
    const found = await this.options.receipts.find(this.options.ids.keyOf(receiptId));
    return found ? this.bodyOf(found.receipt, found.events) : null;
  }

  async readSigned(receiptId: string): Promise<SignedReceipt | null> {
    const body = await this.read(receiptId);
    return body && this.options.signer.sign(body as unknown as Record<string, unknown>);
  }

  /** A GET or HEAD of the note page (no view): the timeline gets its time and the client's class. */
  async notePageFetched(uuid: string, userAgent: string | undefined): Promise<void> {
    const now = this.options.clock.now();
    await this.options.receipts.recordPageFetch(this.options.noteCrypto.lookup(uuid), now, classifyClient(userAgent));
  }

  /** "End this note now": the note is deleted as by views, `note.destroyed` reason `creator`. */
  async endNow(receiptId: string): Promise<EndNowOutcome> {
    if (!RECEIPT_ID.test(receiptId)) return 'not_found';
    const found = await this.options.receipts.find(this.options.ids.keyOf(receiptId));
    if (!found) return 'not_found';
    if (found.receipt.endedAt !== null) return 'already_ended';
    const noteRef = found.receipt.noteRef;
    const lookup = await this.options.receipts.noteLookupOf(noteRef);
    if (lookup === null) return 'already_ended';
    const now = this.options.clock.now();
    const messages = await this.options.store.transaction(async (tx) => {
      const state = await tx.lock(lookup);
      if (!state || state.expiresAt.getTime() <= now.getTime()) return null;
      await tx.delete(lookup);
      const ended = [noteEventMessage('note.destroyed', { note_id: state.noteRef, reason: 'creator', was_read: state.currentViews > 0 }, now)];
      // The creator presented the receipt, not the link: the webhook learns no uuid (DECISIONS 11).
      const out = this.options.webhooks ? this.options.webhooks.attach(ended, { uuid: null, access: null, target: state.webhookBox ?? null }) : ended;
      await tx.enqueue(out);
      await tx.recordReceipt([{ noteRef: state.noteRef, at: now, kind: 'end', reason: 'creator' }]);
      return out;
    });
    if (!messages) return 'already_ended';
    this.options.logger.info('note ended by its creator');
    notifyObserver(this.options.events, messages);
    return 'ended';
  }

  private bodyOf(receipt: StoredReceipt, events: readonly StoredReceiptEvent[]): ReceiptBody {
    const now = this.options.clock.now();
    const viewsUsed = events.filter((event) => event.kind === 'reveal').length;
    // A note past its expiry that the sweeper has not reached yet has ended all the same.
    const lapsed = receipt.endedAt === null && receipt.expiresAt.getTime() <= now.getTime();
    const endedAt = receipt.endedAt ?? (lapsed ? receipt.expiresAt : null);
    const endReason: NoteEndReason | null = receipt.endReason ?? (lapsed ? (receipt.expiryType === 'view' ? 'retention' : 'time') : null);
    const timeline: ReceiptTimelineEntry[] = [{ at: formatTimestamp(receipt.createdAt), event: 'created' }];
    for (const event of events) {
      const at = formatTimestamp(event.at);
      if (event.kind === 'page_fetch') timeline.push({ at, event: 'page_fetch', client: event.client ?? 'other' });
      else if (event.kind === 'file_download') timeline.push({ at, event: 'file_download', client: event.client ?? 'other' });
      else if (event.kind === 'end') timeline.push({ at, event: 'end', reason: event.reason ?? 'views' });
      else timeline.push({ at, event: event.kind });
    }
    if (lapsed) timeline.push({ at: formatTimestamp(receipt.expiresAt), event: 'end', reason: endReason! });
    return {
      version: 1,
      issuer: this.issuer,
      note_ref: receipt.noteRef,
      created_at: formatTimestamp(receipt.createdAt),
      expiry_type: receipt.expiryType,
      max_views: receipt.maxViews,
      has_passcode: receipt.hasPasscode,
      expires_at: formatTimestamp(receipt.expiresAt),
      views_used: viewsUsed,
      views_left: endedAt === null ? Math.max(0, receipt.maxViews - viewsUsed) : 0,
      status: endedAt === null ? 'active' : 'ended',
      ended_at: endedAt && formatTimestamp(endedAt),
      end_reason: endReason,
      purge_after: endedAt && formatTimestamp(new Date(endedAt.getTime() + this.retentionMs)),
      timeline,
      issued_at: formatTimestamp(now),
    };
  }
}

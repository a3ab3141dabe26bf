import type { NoteWebhooks } from '../domain/note-webhooks';
import { formatTimestamp, type Clock, type Logger } from '@vanish/common';
import { noteEventMessage, notifyObserver, type NoteEventsObserver } from '../domain/note-events';
import type { ClientClass, NoteEndReason, NoteStore } from '../domain/ports';
import type { NoteCrypto } from '../domain/note-crypto';
import { classifyClient } from './client-class';
import { RECEIPT_ID, type ReceiptIds } from './receipt-ids';
import { nextSilenceDeadline } from '../domain/note-release';
import type { ReceiptSigner, SignedReceipt } from './receipt-signer';
import type { ReceiptStore, StoredReceipt, StoredReceiptEvent } from './ports';

const HOUR_MS = 3_600_000;

export type ReceiptTimelineEntry =
  | { at: string; event: 'created' | 'wrong_passcode' | 'shrink' | 'checkin' | 'release' }
  | { at: string; event: 'reveal'; release_digest?: string }
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
  /** DECISIONS 16 (present only when set): the first view ends the note at most this many minutes later. */
  shrink_after_first_view_minutes?: number;
  /** DECISIONS 16 (present only for a gated note). */
  release?: ReceiptRelease;
}

/**
 * DECISIONS 16: a note that opens at a time (`scheduled`) or when its creator stops checking in
 * (`held`, a dead-man's switch); `released` once that time has come. `opens_at` is the time (for a
 * switch, the current deadline, which each check-in moves).
 */
export interface ReceiptRelease {
  kind: 'at' | 'silence';
  state: 'scheduled' | 'held' | 'released';
  opens_at: string;
  silence_hours: number | null;
  released_at: string | null;
}

export type EndNowOutcome = 'ended' | 'already_ended' | 'not_found';

/** DECISIONS 16, a check-in: `held` with the new deadline; otherwise why none was made. */
export type CheckInOutcome =
  | { outcome: 'held'; opensAt: Date }
  | { outcome: 'released' | 'not_a_switch' | 'ended' | 'not_found' };

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

  /**
   * DECISIONS 16, "I am still here": moves a held dead-man's switch's deadline to now + its period.
   * Once the deadline has passed the note is open and a check-in changes nothing.
   */
  async checkIn(receiptId: string): Promise<CheckInOutcome> {
    if (!RECEIPT_ID.test(receiptId)) return { outcome: 'not_found' };
    const found = await this.options.receipts.find(this.options.ids.keyOf(receiptId));
    if (!found) return { outcome: 'not_found' };
    const { receipt } = found;
    if (!receipt.silenceHours) return { outcome: 'not_a_switch' };
    if (receipt.endedAt !== null) return { outcome: 'ended' };
    const lookup = await this.options.receipts.noteLookupOf(receipt.noteRef);
    if (lookup === null) return { outcome: 'ended' };
    const now = this.options.clock.now();
    const result = await this.options.store.transaction(async (tx): Promise<CheckInOutcome> => {
      const state = await tx.lock(lookup);
      if (!state || state.expiresAt.getTime() <= now.getTime()) return { outcome: 'ended' };
      const silenceHours = state.controls?.silenceHours;
      if (!silenceHours) return { outcome: 'not_a_switch' };
      const next = nextSilenceDeadline(silenceHours, now);
      if (!(await tx.checkIn(lookup, now, next))) return { outcome: 'released' };
      await tx.recordReceipt([{ noteRef: state.noteRef, at: now, kind: 'checkin', releaseAt: next }]);
      return { outcome: 'held', opensAt: next };
    });
    if (result.outcome === 'held') this.options.logger.info('a dead-man\'s switch was checked in');
    return result;
  }

  private bodyOf(receipt: StoredReceipt, events: readonly StoredReceiptEvent[]): ReceiptBody {
    const now = this.options.clock.now();
    const viewsUsed = events.filter((event) => event.kind === 'reveal').length;
    // A note past its expiry that the sweeper has not reached yet has ended all the same.
    const lapsed = receipt.endedAt === null && receipt.expiresAt.getTime() <= now.getTime();
    const endedAt = receipt.endedAt ?? (lapsed ? receipt.expiresAt : null);
    const shrunk = Boolean(receipt.shrinkMinutes) && viewsUsed > 0;
    const endReason: NoteEndReason | null = receipt.endReason ?? (lapsed ? (receipt.expiryType === 'view' && !shrunk ? 'retention' : 'time') : null);
    const timeline: ReceiptTimelineEntry[] = [{ at: formatTimestamp(receipt.createdAt), event: 'created' }];
    for (const event of events) {
      const at = formatTimestamp(event.at);
      if (event.kind === 'page_fetch') timeline.push({ at, event: 'page_fetch', client: event.client ?? 'other' });
      else if (event.kind === 'file_download') timeline.push({ at, event: 'file_download', client: event.client ?? 'other' });
      else if (event.kind === 'end') timeline.push({ at, event: 'end', reason: event.reason ?? 'views' });
      else if (event.kind === 'reveal') timeline.push({ at, event: 'reveal', ...(event.releaseDigest ? { release_digest: event.releaseDigest } : {}) });
      // A scheduled release shows once its time has come, even before the sweep announced it.
      else if (event.kind === 'release' && receipt.releasedAt === null) continue;
      else timeline.push({ at, event: event.kind });
    }
    const release = releaseOf(receipt, now);
    if (release && release.state === 'released' && release.released_at === null && endedAt === null) {
      timeline.push({ at: release.opens_at, event: 'release' });
      timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
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
      ...(receipt.shrinkMinutes ? { shrink_after_first_view_minutes: receipt.shrinkMinutes } : {}),
      ...(release ? { release } : {}),
    };
  }
}

/** DECISIONS 16: the receipt's view of the note's release, or undefined for a note without a gate. */
function releaseOf(receipt: StoredReceipt, now: Date): ReceiptRelease | undefined {
  if (!receipt.releaseAt) return undefined;
  const silence = receipt.silenceHours ?? null;
  const open = receipt.releasedAt !== null && receipt.releasedAt !== undefined ? true : receipt.releaseAt.getTime() <= now.getTime();
  return {
    kind: silence ? 'silence' : 'at',
    state: open ? 'released' : silence ? 'held' : 'scheduled',
    opens_at: formatTimestamp(receipt.releaseAt),
    silence_hours: silence,
    released_at: receipt.releasedAt ? formatTimestamp(receipt.releasedAt) : null,
  };
}

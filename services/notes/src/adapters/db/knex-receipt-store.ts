import type { Knex } from 'knex';
import type { ExpiryType } from '@vanish/common';
import type { ClientClass, NoteEndReason, NoteRecord, ReceiptEntry } from '../../domain/ports';
import type { ReceiptStore, StoredReceipt, StoredReceiptEvent } from '../../receipts/ports';
import { DEFAULT_OPERATION_TIMEOUT_MS, withDatabase, type KnexStoreOptions } from './database-errors';

export interface ReceiptRow {
  receipt_key: string;
  note_ref: string;
  expiry_type: string;
  max_views: number;
  has_passcode: number | boolean;
  created_at: number | string;
  expires_at: number | string;
  ended_at: number | string | null;
  end_reason: string | null;
}

interface ReceiptEventRow {
  note_ref: string;
  at: number;
  kind: string;
  client: string | null;
  reason: string | null;
}

/** The receipts row written with a new note (same transaction as the note). */
export function receiptRowOf(note: NoteRecord): ReceiptRow {
  return {
    receipt_key: note.receiptKey!,
    note_ref: note.noteRef,
    expiry_type: note.expiryType,
    max_views: note.maxViews,
    has_passcode: note.hasPasscode,
    created_at: note.createdAt.getTime(),
    expires_at: note.expiresAt.getTime(),
    ended_at: null,
    end_reason: null,
  };
}

export function receiptEventRow(entry: ReceiptEntry): ReceiptEventRow {
  return {
    note_ref: entry.noteRef,
    at: entry.at.getTime(),
    kind: entry.kind,
    client: entry.kind === 'page_fetch' || entry.kind === 'file_download' ? entry.client : null,
    reason: entry.kind === 'end' ? entry.reason : null,
  };
}

/**
 * Page fetches kept per note: enough to tell a preview from a reader, and a bound on what anyone
 * holding a link can make the receipt store (every fetch writes a row otherwise).
 */
export const MAX_PAGE_FETCHES_PER_NOTE = 100;

/** ReceiptStore on knex (SQLite or MySQL, same SQL). */
export class KnexReceiptStore implements ReceiptStore {
  private readonly timeoutMs: number;

  constructor(private readonly knex: Knex, options: KnexStoreOptions = {}) {
    this.timeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  }

  find(receiptKey: string): Promise<{ receipt: StoredReceipt; events: StoredReceiptEvent[] } | null> {
    return withDatabase(async () => {
      const row = await this.knex<ReceiptRow>('receipts').where({ receipt_key: receiptKey }).first();
      if (!row) return null;
      const events: ReceiptEventRow[] = await this.knex('receipt_events')
        .select('at', 'kind', 'client', 'reason')
        .where({ note_ref: row.note_ref })
        .orderBy('seq');
      return {
        receipt: {
          noteRef: row.note_ref,
          expiryType: row.expiry_type as ExpiryType,
          maxViews: Number(row.max_views),
          hasPasscode: Boolean(Number(row.has_passcode)),
          createdAt: new Date(Number(row.created_at)),
          expiresAt: new Date(Number(row.expires_at)),
          endedAt: row.ended_at === null ? null : new Date(Number(row.ended_at)),
          endReason: row.end_reason as NoteEndReason | null,
        },
        events: events.map((event) => ({
          at: new Date(Number(event.at)),
          kind: event.kind as StoredReceiptEvent['kind'],
          client: event.client as ClientClass | null,
          reason: event.reason as NoteEndReason | null,
        })),
      };
    }, this.timeoutMs);
  }

  recordPageFetch(noteLookup: string, now: Date, client: ClientClass): Promise<void> {
    return withDatabase(async () => {
      const row = await this.knex('notes')
        .join('receipts', 'receipts.note_ref', 'notes.note_ref')
        .select('notes.note_ref as note_ref')
        .where('notes.lookup', noteLookup)
        .andWhere('notes.expires_at', '>', now.getTime())
        .whereNull('receipts.ended_at')
        .first() as { note_ref: string } | undefined;
      if (!row) return;
      const [{ n }] = await this.knex('receipt_events').where({ note_ref: row.note_ref, kind: 'page_fetch' }).count({ n: '*' }) as Array<{ n: number | string }>;
      if (Number(n) >= MAX_PAGE_FETCHES_PER_NOTE) return;
      await this.knex('receipt_events').insert(receiptEventRow({ noteRef: row.note_ref, at: now, kind: 'page_fetch', client }));
    }, this.timeoutMs);
  }

  noteLookupOf(noteRef: string): Promise<string | null> {
    return withDatabase(async () => {
      const row = await this.knex('notes').select('lookup').where({ note_ref: noteRef }).first() as { lookup: string } | undefined;
      return row?.lookup ?? null;
    }, this.timeoutMs);
  }

  purgeEnded(endedBefore: Date, limit: number): Promise<number> {
    return withDatabase(async () => {
      const cutoff = endedBefore.getTime();
      // A receipt whose end was never recorded (its note passed its last deadline some other way) goes
      // a retention after that deadline, so that nothing is kept for ever.
      const refs = (await this.knex('receipts').select('note_ref')
        .where('ended_at', '<=', cutoff)
        .orWhere((q) => q.whereNull('ended_at').andWhere('expires_at', '<=', cutoff))
        .limit(limit))
        .map((row: { note_ref: string }) => row.note_ref);
      if (refs.length === 0) return 0;
      await this.knex.transaction(async (trx) => {
        await trx('receipt_events').whereIn('note_ref', refs).delete();
        await trx('receipts').whereIn('note_ref', refs).delete();
      });
      return refs.length;
    }, this.timeoutMs);
  }
}

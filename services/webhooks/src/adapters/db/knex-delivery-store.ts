import { GroupCommit } from '@vanish/common';
import type { Knex } from 'knex';
import { retryingDeadlocks } from '@vanish/database';
import type { DeliveryState, DeliveryStatus, DeliveryStore } from '../../domain/ports';

const GONE_KEPT_MS = 400 * 24 * 3_600_000;

interface StateLookup {
  eventId: string;
  noteRef: string;
}

interface DeliveryRow {
  event_id: string;
  target_key: string;
  status: DeliveryStatus;
  attempts: number;
  http_status: number | null;
  updated_at: number;
}

/**
 * At most 100 events per lookup (200 bound values) and 100 records per write (600): under SQLite's
 * oldest limit of 999 bound values.
 */
const LOOKUPS_PER_STATEMENT = 100;
const RECORDS_PER_STATEMENT = 100;

/**
 * DeliveryStore on knex (SQLite or MySQL, same SQL). Each event costs one lookup and one write per
 * target, and under load these are shared (GroupCommit): the events of a prefetch window that ask
 * while a statement runs are answered by the next one, so one SELECT serves them all and one
 * multi-row upsert records them all. A lone event goes at once. Each write resolves only once its
 * statement has committed, so the message is still acknowledged after its record is durable.
 */
export class KnexDeliveryStore implements DeliveryStore {
  private readonly lookups: GroupCommit<StateLookup, DeliveryState>;
  private readonly writes: GroupCommit<DeliveryRow>;

  constructor(private readonly knex: Knex) {
    this.lookups = new GroupCommit((batch) => this.lookUp(batch), { maxItems: LOOKUPS_PER_STATEMENT });
    this.writes = new GroupCommit((batch) => this.write(batch), { maxItems: RECORDS_PER_STATEMENT });
  }

  stateOf(eventId: string, noteRef: string): Promise<DeliveryState> {
    return this.lookups.add({ eventId, noteRef });
  }

  record(eventId: string, targetKey: string, status: DeliveryStatus, attempts: number, httpStatus: number | null, now: Date): Promise<void> {
    return this.writes.add({ event_id: eventId, target_key: targetKey, status, attempts, http_status: httpStatus, updated_at: now.getTime() });
  }

  async markGone(noteRef: string, now: Date): Promise<void> {
    await this.knex('webhook_gone_notes').insert({ note_ref: noteRef, created_at: now.getTime() }).onConflict('note_ref').ignore();
  }

  async prune(cutoff: Date): Promise<number> {
    const deliveries = Number(await this.knex('webhook_deliveries').where('updated_at', '<', cutoff.getTime()).delete());
    // A note lives at most a year (DECISIONS 3): its "gone" mark must outlive it.
    const gone = Number(await this.knex('webhook_gone_notes').where('created_at', '<', cutoff.getTime() - GONE_KEPT_MS).delete());
    return deliveries + gone;
  }

  async ping(): Promise<boolean> {
    try {
      await this.knex.raw('select 1');
      return true;
    } catch {
      return false;
    }
  }

  /** One statement for the whole batch: the events' records and, in the same answer, which notes are gone. */
  private async lookUp(batch: readonly StateLookup[]): Promise<DeliveryState[]> {
    const eventIds = [...new Set(batch.map((lookup) => lookup.eventId))];
    const noteRefs = [...new Set(batch.map((lookup) => lookup.noteRef))];
    const { knex } = this;
    const rows: Array<{ kind: string; ref: string; target_key: string | null; status: DeliveryStatus | null; attempts: number | null }> = await knex
      .select(knex.raw("'record' as kind"), 'event_id as ref', 'target_key', 'status', 'attempts')
      .from('webhook_deliveries').whereIn('event_id', eventIds)
      .unionAll((gone) => {
        void gone.select(knex.raw("'gone' as kind"), 'note_ref as ref', knex.raw('null'), knex.raw('null'), knex.raw('null'))
          .from('webhook_gone_notes').whereIn('note_ref', noteRefs);
      });
    const records = new Map<string, DeliveryState['records']>();
    const gone = new Set<string>();
    for (const row of rows) {
      if (row.kind === 'gone') { gone.add(row.ref); continue; }
      let ofEvent = records.get(row.ref);
      if (!ofEvent) records.set(row.ref, ofEvent = new Map());
      ofEvent.set(row.target_key!, { status: row.status!, attempts: Number(row.attempts) });
    }
    // A fresh map per caller: the dispatcher may read it while another caller's event shares the id.
    return batch.map((lookup) => ({ records: new Map(records.get(lookup.eventId)), gone: gone.has(lookup.noteRef) }));
  }

  /**
   * One multi-row upsert for the batch. Rows go in key order, so that two replicas writing
   * overlapping batches take their row locks in the same order (no deadlock); a key twice in one
   * batch keeps its last record.
   */
  private async write(batch: readonly DeliveryRow[]): Promise<void> {
    const byKey = new Map(batch.map((row) => [`${row.event_id}\u0000${row.target_key}`, row]));
    const rows = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    // A deadlock victim is tried again: failing it would fail every caller of the batch, whose
    // deliveries mostly went out already and would then go out again.
    await retryingDeadlocks(() => this.knex('webhook_deliveries').insert(rows)
      .onConflict(['event_id', 'target_key'])
      .merge(['status', 'attempts', 'http_status', 'updated_at']));
  }
}

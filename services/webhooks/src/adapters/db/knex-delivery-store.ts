import type { Knex } from 'knex';
import type { DeliveryStatus, DeliveryStore } from '../../domain/ports';

const GONE_KEPT_MS = 400 * 24 * 3_600_000;

/** DeliveryStore on knex (SQLite or MySQL, same SQL). */
export class KnexDeliveryStore implements DeliveryStore {
  constructor(private readonly knex: Knex) {}

  async recordsOf(eventId: string): Promise<Map<string, { status: DeliveryStatus; attempts: number }>> {
    const rows = await this.knex('webhook_deliveries').select('target_key', 'status', 'attempts').where({ event_id: eventId });
    return new Map(rows.map((row: { target_key: string; status: DeliveryStatus; attempts: number }) => [row.target_key, { status: row.status, attempts: Number(row.attempts) }]));
  }

  async record(eventId: string, targetKey: string, status: DeliveryStatus, attempts: number, httpStatus: number | null, now: Date): Promise<void> {
    await this.knex('webhook_deliveries')
      .insert({ event_id: eventId, target_key: targetKey, status, attempts, http_status: httpStatus, updated_at: now.getTime() })
      .onConflict(['event_id', 'target_key'])
      .merge(['status', 'attempts', 'http_status', 'updated_at']);
  }

  async markGone(noteRef: string, now: Date): Promise<void> {
    await this.knex('webhook_gone_notes').insert({ note_ref: noteRef, created_at: now.getTime() }).onConflict('note_ref').ignore();
  }

  async isGone(noteRef: string): Promise<boolean> {
    return (await this.knex('webhook_gone_notes').where({ note_ref: noteRef }).first()) !== undefined;
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
}

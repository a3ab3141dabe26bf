import type { Knex } from 'knex';
import type { MailKind } from '../../domain/mail-command';
import type { BeginDeliveryInput, BeginDeliveryResult, DeliveryState, MailerStore } from '../../domain/mailer-store';

const HOUR = 3_600_000;
const RECIPIENTS = 'mailer_recipients';
const DELIVERIES = 'mailer_deliveries';

interface DeliveryRow {
  command_id: string;
  state: DeliveryState;
  attempts: number;
  created_at: number | string;
  attempt_until: number | string;
}

/**
 * MailerStore on knex (MariaDB/MySQL or SQLite). The quota check (one quota per address and kind)
 * is serialised per address by locking that address's recipients row first (an upsert takes the
 * row's write lock), so replicas sharing the database can never both take the last e-mail of a quota.
 */
export class KnexMailerStore implements MailerStore {
  constructor(private readonly knex: Knex) {}

  async beginDelivery(input: BeginDeliveryInput): Promise<BeginDeliveryResult> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.knex.transaction((trx) => this.begin(trx, input));
      } catch (err) {
        if (attempt >= 5 || !isDeadlock(err)) throw err;
      }
    }
  }

  private async begin(trx: Knex.Transaction, input: BeginDeliveryInput): Promise<BeginDeliveryResult> {
    const now = input.now.getTime();
    await trx(RECIPIENTS)
      .insert({ address_hash: input.addressHash, touched_at: now, suppressed_at: null, suppression_reason: null })
      .onConflict('address_hash')
      .merge({ touched_at: now });
    const recipient = await trx(RECIPIENTS).where({ address_hash: input.addressHash }).first('suppressed_at');
    const suppressed = recipient?.suppressed_at !== null && recipient?.suppressed_at !== undefined;

    const existing = (await trx(DELIVERIES).where({ command_id: input.commandId }).first()) as DeliveryRow | undefined;
    if (existing) {
      if (existing.state === 'sent') return { decision: 'already_sent' };
      if (existing.state !== 'reserved') return { decision: 'already_dropped', state: existing.state };
      if (Number(existing.attempt_until) > now) return { decision: 'in_flight' };
      if (suppressed) {
        await trx(DELIVERIES).where({ command_id: input.commandId }).update({ state: 'suppressed', updated_at: now });
        return { decision: 'suppressed' };
      }
      const attempts = Number(existing.attempts) + 1;
      await trx(DELIVERIES).where({ command_id: input.commandId }).update({ attempts, attempt_until: now + input.attemptLeaseMs, updated_at: now });
      return { decision: 'send', attempts, firstAttemptAt: new Date(Number(existing.created_at)) };
    }

    const record = (state: DeliveryState, counted: boolean) => trx(DELIVERIES).insert({
      command_id: input.commandId, address_hash: input.addressHash, kind: input.kind, state, counted,
      attempts: 1, created_at: now, updated_at: now, attempt_until: state === 'reserved' ? now + input.attemptLeaseMs : 0,
    });
    if (suppressed) {
      await record('suppressed', false);
      return { decision: 'suppressed' };
    }
    const [hour, day] = await Promise.all([
      this.countSince(trx, input.addressHash, input.kind, now - HOUR),
      this.countSince(trx, input.addressHash, input.kind, now - 24 * HOUR),
    ]);
    if (hour >= input.quotaPerHour || day >= input.quotaPerDay) {
      await record('over_quota', false);
      return { decision: 'over_quota' };
    }
    await record('reserved', true);
    return { decision: 'send', attempts: 1, firstAttemptAt: input.now };
  }

  /** Each kind has its own quota: link e-mails to an address must not silence its read notifications. */
  private async countSince(trx: Knex.Transaction, addressHash: string, kind: MailKind, since: number): Promise<number> {
    const row = await trx(DELIVERIES)
      .where({ address_hash: addressHash, kind, counted: true })
      .andWhere('created_at', '>', since)
      .count({ n: '*' })
      .first();
    return Number(row?.n ?? 0);
  }

  async markSent(commandId: string, at: Date): Promise<void> {
    await this.knex(DELIVERIES).where({ command_id: commandId }).update({ state: 'sent', updated_at: at.getTime() });
  }

  async markFailed(commandId: string, at: Date): Promise<void> {
    await this.knex(DELIVERIES).where({ command_id: commandId }).update({ state: 'failed', updated_at: at.getTime() });
  }

  async endAttempt(commandId: string): Promise<void> {
    await this.knex(DELIVERIES).where({ command_id: commandId, state: 'reserved' }).update({ attempt_until: 0 });
  }

  async suppress(addressHash: string, reason: 'unsubscribed' | 'rejected', at: Date): Promise<void> {
    const now = at.getTime();
    await this.knex(RECIPIENTS)
      .insert({ address_hash: addressHash, touched_at: now, suppressed_at: now, suppression_reason: reason })
      .onConflict('address_hash')
      .merge({ touched_at: now });
    await this.knex(RECIPIENTS).where({ address_hash: addressHash }).whereNull('suppressed_at')
      .update({ suppressed_at: now, suppression_reason: reason });
  }

  async isSuppressed(addressHash: string): Promise<boolean> {
    const row = await this.knex(RECIPIENTS).where({ address_hash: addressHash }).whereNotNull('suppressed_at').first('address_hash');
    return row !== undefined;
  }

  async purgeDeliveries(olderThan: Date): Promise<number> {
    return this.knex(DELIVERIES).where('created_at', '<', olderThan.getTime()).delete();
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

function isDeadlock(err: unknown): boolean {
  const e = err as { code?: string; errno?: number };
  return e?.code === 'ER_LOCK_DEADLOCK' || e?.errno === 1213 || e?.code === 'SQLITE_BUSY';
}

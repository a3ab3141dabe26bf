import type { Knex } from 'knex';
import { AppError, DependencyUnavailableError, GroupCommit } from '@vanish/common';
import { isConnectionLost, isDatabaseUnavailable, isRetryableAbort, retryingTransaction } from '@vanish/database';
import type { MailKind } from '../../domain/mail-command';
import type { BeginDeliveryInput, BeginDeliveryResult, DeliveryState, MailerStore } from '../../domain/mailer-store';

const HOUR = 3_600_000;
const RECIPIENTS = 'mailer_recipients';
const DELIVERIES = 'mailer_deliveries';

/** Most commands decided (or marked sent) in one transaction: above the largest prefetch window in use. */
const MAX_BATCH = 200;

/** How long marking sent e-mails is tried again through a database failover (HAProxy moves the writer within seconds). */
const MARK_SENT_PERSISTENCE_MS = 15_000;

interface DeliveryRow {
  command_id: string;
  state: DeliveryState;
  attempts: number;
  created_at: number | string;
  attempt_until: number | string;
}

/** A delivery row as a batch decides it: loaded from the table, or new in this batch. */
interface PendingDelivery {
  row: {
    command_id: string; address_hash: string; kind: MailKind; state: DeliveryState; counted: boolean; attempts: number;
    created_at: number; updated_at: number; attempt_until: number;
  };
  isNew: boolean;
  changed: boolean;
}

interface SentMark {
  commandId: string;
  at: Date;
}

/**
 * MailerStore on knex (MariaDB/MySQL or SQLite). The quota check (one quota per address and kind)
 * is serialised per address by locking that address's recipients row first (an upsert takes the
 * row's write lock), so replicas sharing the database can never both take the last e-mail of a quota.
 *
 * Commands that arrive while a transaction is under way share the next one (GroupCommit): one
 * transaction of seven statements decides a whole prefetch window, and one UPDATE marks every e-mail
 * the SMTP server accepted meanwhile as sent. Each caller's promise settles only after its own
 * transaction committed, so the guarantees of one command per transaction hold (docs/mailer.md).
 */
export class KnexMailerStore implements MailerStore {
  private readonly beginnings: GroupCommit<BeginDeliveryInput, BeginDeliveryResult>;
  private readonly sentMarks: GroupCommit<SentMark>;

  constructor(private readonly knex: Knex) {
    this.beginnings = new GroupCommit((batch) => this.beginBatchRetryingDeadlocks(batch), { maxItems: MAX_BATCH });
    this.sentMarks = new GroupCommit((batch) => this.markBatchSent(batch), { maxItems: MAX_BATCH });
  }

  beginDelivery(input: BeginDeliveryInput): Promise<BeginDeliveryResult> {
    return this.beginnings.add(input);
  }

  private beginBatchRetryingDeadlocks(batch: readonly BeginDeliveryInput[]): Promise<BeginDeliveryResult[]> {
    // Also a Galera certification conflict, a node without quorum or a connection lost before COMMIT.
    return retryingTransaction(this.knex, (trx) => this.beginBatch(trx, batch));
  }

  /**
   * Decides the batch's commands in arrival order, as if each had had a transaction of its own after
   * the one before: a command sees the rows the earlier ones of its batch reserved.
   */
  private async beginBatch(trx: Knex.Transaction, batch: readonly BeginDeliveryInput[]): Promise<BeginDeliveryResult[]> {
    // Locked in one order by every replica, so two batches sharing addresses cannot deadlock.
    const addressHashes = [...new Set(batch.map((input) => input.addressHash))].sort();
    const touchedAt = Math.max(...batch.map((input) => input.now.getTime()));
    await trx(RECIPIENTS)
      .insert(addressHashes.map((addressHash) => ({ address_hash: addressHash, touched_at: touchedAt, suppressed_at: null, suppression_reason: null })))
      .onConflict('address_hash')
      .merge(['touched_at']);
    const suppressedRows = await trx(RECIPIENTS).whereIn('address_hash', addressHashes).whereNotNull('suppressed_at').select('address_hash');
    const suppressed = new Set(suppressedRows.map((row: { address_hash: string }) => row.address_hash));

    const commandIds = [...new Set(batch.map((input) => input.commandId))];
    const existing = (await trx(DELIVERIES).whereIn('command_id', commandIds)
      .select('command_id', 'state', 'attempts', 'created_at', 'attempt_until')) as DeliveryRow[];
    const deliveries = new Map<string, PendingDelivery>();
    for (const row of existing) {
      deliveries.set(row.command_id, {
        row: {
          ...row, address_hash: '', kind: 'link', counted: false, attempts: Number(row.attempts), created_at: Number(row.created_at),
          updated_at: 0, attempt_until: Number(row.attempt_until),
        },
        isNew: false, changed: false,
      });
    }

    const oldestWindowStart = Math.min(...batch.map((input) => input.now.getTime())) - 24 * HOUR;
    const countedRows = await trx(DELIVERIES)
      .whereIn('address_hash', addressHashes).where({ counted: true }).andWhere('created_at', '>', oldestWindowStart)
      .select('address_hash', 'kind', 'created_at');
    const counted = new Map<string, number[]>();
    const countedTimes = (addressHash: string, kind: MailKind) => {
      const key = `${addressHash} ${kind}`;
      let times = counted.get(key);
      if (!times) counted.set(key, times = []);
      return times;
    };
    for (const row of countedRows as Array<{ address_hash: string; kind: MailKind; created_at: number | string }>) {
      countedTimes(row.address_hash, row.kind).push(Number(row.created_at));
    }

    const results = batch.map((input) => decide(input, deliveries, suppressed.has(input.addressHash), countedTimes(input.addressHash, input.kind)));
    const pending = [...deliveries.values()].filter((delivery) => delivery.changed);
    const inserts = pending.filter((delivery) => delivery.isNew).map((delivery) => delivery.row);
    if (inserts.length > 0) await trx(DELIVERIES).insert(inserts);
    for (const { row } of pending.filter((delivery) => !delivery.isNew)) {
      await trx(DELIVERIES).where({ command_id: row.command_id }).update({ state: row.state, attempts: row.attempts, updated_at: row.updated_at, attempt_until: row.attempt_until });
    }
    return results;
  }

  markSent(commandId: string, at: Date): Promise<void> {
    return this.sentMarks.add({ commandId, at });
  }

  private async markBatchSent(batch: readonly SentMark[]): Promise<void> {
    // One time for the batch: the latest of its marks, a few milliseconds after the others at most.
    const updatedAt = Math.max(...batch.map((mark) => mark.at.getTime()));
    // The e-mails are with the SMTP server already: a mark lost now means a second copy once the
    // command is redelivered. The update is idempotent, so it is run again while the database is only
    // briefly away (the writer died and the address moves, a lost connection, a node without quorum).
    const giveUpAt = Date.now() + MARK_SENT_PERSISTENCE_MS;
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.knex(DELIVERIES).whereIn('command_id', batch.map((mark) => mark.commandId)).update({ state: 'sent', updated_at: updatedAt });
        return;
      } catch (err) {
        const passing = isConnectionLost(err) || isRetryableAbort(err) || isDatabaseUnavailable(err);
        if (!passing || Date.now() >= giveUpAt) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 100 * attempt)));
      }
    }
  }

  async markFailed(commandId: string, at: Date): Promise<void> {
    await this.knex(DELIVERIES).where({ command_id: commandId }).update({ state: 'failed', updated_at: at.getTime() });
  }

  async extendAttempt(commandId: string, until: Date): Promise<void> {
    await this.knex(DELIVERIES).where({ command_id: commandId, state: 'reserved' }).update({ attempt_until: until.getTime() });
  }

  async endAttempt(commandId: string): Promise<void> {
    await this.knex(DELIVERIES).where({ command_id: commandId, state: 'reserved' }).update({ attempt_until: 0 });
  }

  async suppress(addressHash: string, reason: 'unsubscribed' | 'rejected', at: Date): Promise<void> {
    return unavailableAs503(() => this.suppressNow(addressHash, reason, at));
  }

  private async suppressNow(addressHash: string, reason: 'unsubscribed' | 'rejected', at: Date): Promise<void> {
    const now = at.getTime();
    await this.knex(RECIPIENTS)
      .insert({ address_hash: addressHash, touched_at: now, suppressed_at: now, suppression_reason: reason })
      .onConflict('address_hash')
      .merge({ touched_at: now });
    await this.knex(RECIPIENTS).where({ address_hash: addressHash }).whereNull('suppressed_at')
      .update({ suppressed_at: now, suppression_reason: reason });
  }

  async isSuppressed(addressHash: string): Promise<boolean> {
    return unavailableAs503(async () => {
      const row = await this.knex(RECIPIENTS).where({ address_hash: addressHash }).whereNotNull('suppressed_at').first('address_hash');
      return row !== undefined;
    });
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

/**
 * One command's decision (the rules of MailerStore.beginDelivery), recorded in `deliveries` and, when
 * it reserves an e-mail, in the address's counted times, so the batch's later commands see it.
 */
function decide(input: BeginDeliveryInput, deliveries: Map<string, PendingDelivery>, suppressed: boolean, countedTimes: number[]): BeginDeliveryResult {
  const now = input.now.getTime();
  const existing = deliveries.get(input.commandId);
  if (existing) {
    const { row } = existing;
    if (row.state === 'sent') return { decision: 'already_sent' };
    if (row.state !== 'reserved') return { decision: 'already_dropped', state: row.state };
    // Another delivery of this command (earlier in this batch, or elsewhere) holds it: no second e-mail.
    if (row.attempt_until > now) return { decision: 'in_flight' };
    existing.changed = true;
    row.updated_at = now;
    if (suppressed) {
      row.state = 'suppressed';
      return { decision: 'suppressed' };
    }
    row.attempts += 1;
    row.attempt_until = now + input.attemptLeaseMs;
    return { decision: 'send', attempts: row.attempts, firstAttemptAt: new Date(row.created_at) };
  }

  const record = (state: DeliveryState, isCounted: boolean) => deliveries.set(input.commandId, {
    row: {
      command_id: input.commandId, address_hash: input.addressHash, kind: input.kind, state, counted: isCounted,
      attempts: 1, created_at: now, updated_at: now, attempt_until: state === 'reserved' ? now + input.attemptLeaseMs : 0,
    },
    isNew: true, changed: true,
  });
  if (suppressed) {
    record('suppressed', false);
    return { decision: 'suppressed' };
  }
  // Each kind has its own quota: link e-mails to an address must not silence its read notifications.
  const hour = countedTimes.filter((createdAt) => createdAt > now - HOUR).length;
  const day = countedTimes.filter((createdAt) => createdAt > now - 24 * HOUR).length;
  if (hour >= input.quotaPerHour || day >= input.quotaPerDay) {
    record('over_quota', false);
    return { decision: 'over_quota' };
  }
  record('reserved', true);
  countedTimes.push(now);
  return { decision: 'send', attempts: 1, firstAttemptAt: input.now };
}

/**
 * "The database cannot be reached" as DependencyUnavailableError (503 SERVICE_UNAVAILABLE in the
 * error shape, logged as part of the database's outage) for what the unsubscribe page calls; any
 * other error stays as it is (a 500: a bug).
 */
async function unavailableAs503<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof AppError) && isDatabaseUnavailable(err)) throw new DependencyUnavailableError('database', 'Database unavailable', err);
    throw err;
  }
}

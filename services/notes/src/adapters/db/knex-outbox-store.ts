import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { systemClock, type Clock, type OutboxRow, type OutboxStore } from '@vanish/common';
import { runsOnSqliteThread } from '@vanish/database';
import { DEFAULT_OPERATION_TIMEOUT_MS, withDatabase, type KnexStoreOptions } from './database-errors';

interface OutboxDbRow {
  seq: number | string;
  id: string;
  routing_key: string;
  body: string;
  created_at: number | string;
}

const toOutboxRow = (row: OutboxDbRow): OutboxRow => ({ seq: Number(row.seq), id: row.id, routingKey: row.routing_key, body: row.body });

/**
 * A claim on SQLite in one statement, so one round trip to the database thread instead of three (the relay
 * runs a claim per round): the oldest claimable rows are stamped and returned by the same UPDATE, which is
 * atomic, as the select, conditional update and select by token are together. Values: token, lease end, now, limit.
 */
const CLAIM_RETURNING = 'update `outbox` set `claim_token` = ?, `claimed_until` = ? where `seq` in '
  + '(select `seq` from `outbox` where `claimed_until` is null or `claimed_until` < ? order by `seq` limit ?) '
  + 'returning `seq`, `id`, `routing_key`, `body`';

/**
 * The backlog is counted row by row while the outbox's seqs span at most this many (see backlog()): well above
 * the backlog alert's 100 (deploy/prometheus/alerts.yml), and a walk of a few megabytes at most (events, sealed e-mails).
 */
export const DEFAULT_EXACT_BACKLOG_UP_TO = 2_000;

export interface KnexOutboxStoreOptions extends KnexStoreOptions {
  /** How far apart the first and last seq may be for the backlog to be counted row by row; default 2,000. */
  exactBacklogUpTo?: number;
}

/**
 * The outbox seen from the relay. A claim is a lease: rows are stamped with a random token and a
 * deadline by a conditional UPDATE, so two relays (several notes replicas) never publish the same
 * row at the same time; a crashed relay's rows become claimable again when its lease runs out
 * (a few seconds: a live relay renews its lease while it works).
 */
export class KnexOutboxStore implements OutboxStore {
  private readonly timeoutMs: number;
  /** SQLite: the claim is one UPDATE ... RETURNING (MariaDB has no UPDATE ... RETURNING, nor LIMIT in an IN subquery). */
  private readonly claimsInOneStatement: boolean;

  /** See backlog(). */
  private readonly exactBacklogUpTo: number;

  constructor(private readonly knex: Knex, private readonly clock: Clock = systemClock, options: KnexOutboxStoreOptions = {}) {
    this.timeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
    this.claimsInOneStatement = runsOnSqliteThread(knex);
    this.exactBacklogUpTo = options.exactBacklogUpTo ?? DEFAULT_EXACT_BACKLOG_UP_TO;
  }

  claim(limit: number, leaseMs: number): Promise<OutboxRow[]> {
    return withDatabase(async () => {
      const now = this.clock.now().getTime();
      if (this.claimsInOneStatement) {
        const claimed = await this.knex.raw(CLAIM_RETURNING, [randomUUID(), now + leaseMs, now, limit]) as OutboxDbRow[];
        return claimed.map(toOutboxRow).sort((a, b) => a.seq - b.seq);
      }
      // MariaDB: the oldest claimable rows with their bodies, walking the primary key; then the conditional
      // UPDATE that claims them. Two statements when no other relay got between them (every row changed);
      // otherwise the seqs this token holds are read back, and only those rows are kept (issue 35: the
      // outbox has no index beside its primary key, so every lookup goes by seq).
      const claimable = (q: Knex.QueryBuilder) => q.whereNull('claimed_until').orWhere('claimed_until', '<', now);
      const candidates = (await this.knex('outbox')
        .select('seq', 'id', 'routing_key', 'body').where(claimable).orderBy('seq').limit(limit) as OutboxDbRow[]).map(toOutboxRow);
      if (candidates.length === 0) return [];
      const token = randomUUID();
      const seqs = candidates.map((row) => row.seq);
      const changed = await this.knex('outbox').whereIn('seq', seqs).andWhere(claimable).update({ claim_token: token, claimed_until: now + leaseMs });
      if (changed === candidates.length) return candidates;
      const held = new Set((await this.knex('outbox').select('seq').whereIn('seq', seqs).andWhere({ claim_token: token }) as Array<{ seq: number | string }>)
        .map((row) => Number(row.seq)));
      return candidates.filter((row) => held.has(row.seq));
    }, this.timeoutMs);
  }

  renewLease(seqs: readonly number[], leaseMs: number): Promise<number> {
    return withDatabase(async () => {
      if (seqs.length === 0) return 0;
      const now = this.clock.now().getTime();
      return this.knex('outbox').whereIn('seq', [...seqs]).andWhere('claimed_until', '>=', now).update({ claimed_until: now + leaseMs });
    }, this.timeoutMs);
  }

  releaseLease(seqs: readonly number[]): Promise<void> {
    return withDatabase(async () => {
      if (seqs.length === 0) return;
      await this.knex('outbox').whereIn('seq', [...seqs]).update({ claim_token: null, claimed_until: null });
    }, this.timeoutMs);
  }

  markPublished(seqs: readonly number[]): Promise<void> {
    return withDatabase(async () => {
      if (seqs.length === 0) return;
      await this.knex('outbox').whereIn('seq', [...seqs]).delete();
    }, this.timeoutMs);
  }

  /**
   * The backlog gauges' figures without walking a long outbox: the table has no index beside its primary key
   * (issue 35), so COUNT(*) reads every row with its body, which during a broker outage is every event since
   * it began, every few seconds, on every replica. The first and last seq come from the key's two ends; when
   * they are at most `exactBacklogUpTo` apart the rows between are counted (a short walk), and beyond that the
   * span is the figure: an upper bound, exact but for the seqs of rows already published out of order or of
   * creations rolled back. The oldest row is the first seq's (rows get their seq as they are written).
   */
  backlog(): Promise<{ count: number; oldestAgeSeconds: number }> {
    return withDatabase(async () => {
      const ends = await this.knex('outbox').min({ first: 'seq' }).max({ last: 'seq' }).first() as { first: number | string | null; last: number | string | null } | undefined;
      if (ends?.first === null || ends?.first === undefined || ends.last === null) return { count: 0, oldestAgeSeconds: 0 };
      const first = Number(ends.first);
      const span = Number(ends.last) - first + 1;
      const ageOf = (createdAt: number | string | null | undefined): number =>
        (createdAt === null || createdAt === undefined ? 0 : Math.max(0, (this.clock.now().getTime() - Number(createdAt)) / 1000));
      if (span <= this.exactBacklogUpTo) {
        const row = await this.knex('outbox').count({ count: '*' }).min({ oldest: 'created_at' }).first();
        return { count: Number(row?.count ?? 0), oldestAgeSeconds: ageOf(row?.oldest) };
      }
      const row = await this.knex('outbox').select('created_at').where('seq', first).first() as { created_at: number | string } | undefined;
      return { count: span, oldestAgeSeconds: ageOf(row?.created_at) };
    }, this.timeoutMs);
  }
}

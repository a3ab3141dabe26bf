import { AppError, DependencyUnavailableError } from '@vanish/common';
import type { Knex } from 'knex';
import type { CounterDelta, Counters, CurrentState, HeartbeatRecord, PruneLimits, StatsStore } from '../../domain/stats-store';
import { bucketRanges } from './bucket-ranges';
import { retryingTransaction, runStatements, type Statement } from '@vanish/database';
import { isDatabaseUnavailable, isMysql, rowsOfRawSelect } from './configure-knex';

const COUNTER_NAMES: Record<keyof Counters, string> = {
  created: 'notes_created',
  ended: 'notes_ended',
  endedRead: 'notes_ended_read',
  accessed: 'notes_accessed',
  failedAccess: 'notes_failed_access',
  lateBucketWrites: 'created_bucket_late_writes',
};

async function withDatabase<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof AppError) && isDatabaseUnavailable(err)) throw new DependencyUnavailableError('database', 'Database unavailable', err);
    throw err;
  }
}

/** A query built by knex (quoted for the dialect) as plain SQL and its values, for runStatements. */
function statementOf(query: Knex.QueryBuilder): Statement {
  const { sql, bindings } = query.toSQL();
  return { sql, bindings };
}

/** An all-new batch found an id already counted: rolled back, to be counted again with a look-up. */
class SomeAlreadySeen extends Error {}

const num = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

function countersFrom(rows: ReadonlyArray<{ name: string; value: unknown }>): Counters {
  const byName = new Map(rows.map((r) => [r.name, num(r.value)]));
  const result = {} as Counters;
  for (const [key, name] of Object.entries(COUNTER_NAMES) as Array<[keyof Counters, string]>) result[key] = byName.get(name) ?? 0;
  return result;
}

interface CurrentStateRow {
  part: 'counter' | 'recent' | 'heartbeat';
  name: unknown;
  value: unknown;
  instance: unknown;
  components: unknown;
}

/** StatsStore on knex (SQLite or MySQL/MariaDB); the stats service's tables only. */
export class KnexStatsStore implements StatsStore {
  /**
   * current()'s statement, composed once by the query builder (so quoted for the dialect) and then
   * sent as plain SQL with its three values: composing it took about 60 µs of CPU per read.
   */
  private readonly currentSql: string;

  /** `insert ignore` (MySQL, MariaDB) or `insert or ignore` (SQLite). */
  private readonly insertIgnore: string;

  constructor(private readonly knex: Knex) {
    this.currentSql = this.currentQuery(0, 0, 0).toSQL().sql;
    this.insertIgnore = isMysql(knex) ? 'insert ignore' : 'insert or ignore';
  }

  async applyOnce(eventIdDigest: string, delta: CounterDelta, seenAt: number): Promise<boolean> {
    const [counted] = await this.applyBatch([{ eventIdDigest, delta }], seenAt);
    return counted;
  }

  applyBatch(items: ReadonlyArray<{ eventIdDigest: string; delta: CounterDelta }>, seenAt: number): Promise<boolean[]> {
    if (items.length === 0) return Promise.resolve([]);
    // Run again when it kept nothing (a deadlock or Galera certification conflict, a node without
    // quorum, a connection lost before COMMIT); a lost COMMIT is left to the broker's redelivery,
    // which the seen-events check makes count once.
    return withDatabase(async () => {
      try {
        // Nearly every batch is of ids never seen (a repeat is a redelivery): one INSERT that skips known
        // ids records them and, by the rows it wrote, says there was nothing to look up. One statement
        // fewer per batch of seven (each statement's send was the largest item of the counting profile).
        return await retryingTransaction(this.knex, (trx) => this.countBatch(trx, items, seenAt, 'all-new'));
      } catch (err) {
        if (!(err instanceof SomeAlreadySeen)) throw err;
        // Rolled back: some ids were known. Count again, looking them up first.
        return retryingTransaction(this.knex, (trx) => this.countBatch(trx, items, seenAt, 'look-up'));
      }
    });
  }

  private async countBatch(
    trx: Knex.Transaction, items: ReadonlyArray<{ eventIdDigest: string; delta: CounterDelta }>, seenAt: number, mode: 'all-new' | 'look-up',
  ): Promise<boolean[]> {
    const digests = [...new Set(items.map((i) => i.eventIdDigest))];
    const seen = new Set<string>();
    if (mode === 'look-up') {
      const seenRows: Array<{ id_digest: string }> = await trx('stats_seen_events').whereIn('id_digest', digests).select('id_digest');
      for (const row of seenRows) seen.add(row.id_digest);
    }
    const counted = items.map((item) => {
      if (seen.has(item.eventIdDigest)) return false;
      seen.add(item.eventIdDigest);
      return true;
    });
    const fresh = items.filter((_, index) => counted[index]);
    if (fresh.length === 0) return counted;
    // The writes go as one runStatements: on SQLite one message to the database thread for all of them.
    const writes: Statement[] = [];
    if (mode === 'all-new') {
      // Its row count decides the rest, so it goes alone.
      const written = await this.insertSeenUnlessKnown(trx, digests, seenAt);
      if (written !== digests.length) throw new SomeAlreadySeen();
    } else {
      // A concurrent duplicate (another replica) fails here on the primary key; the broker retries
      // the batch's messages and they then see the id.
      writes.push(statementOf(trx('stats_seen_events').insert(fresh.map((i) => ({ id_digest: i.eventIdDigest, seen_at: seenAt })))));
    }
    const totals: Counters = { created: 0, ended: 0, endedRead: 0, accessed: 0, failedAccess: 0, lateBucketWrites: 0 };
    const minutes = new Map<number, number>();
    for (const { delta } of fresh) {
      for (const key of Object.keys(totals) as Array<keyof Counters>) totals[key] += delta[key];
      if (delta.created > 0 && delta.createdMinute !== undefined) {
        minutes.set(delta.createdMinute, (minutes.get(delta.createdMinute) ?? 0) + delta.created);
      }
    }
    for (const key of Object.keys(COUNTER_NAMES) as Array<keyof Counters>) {
      if (totals[key] !== 0) writes.push(statementOf(trx('stats_counters').where({ name: COUNTER_NAMES[key] }).increment('value', totals[key])));
    }
    const hours = new Map<number, number>();
    for (const [minute, n] of [...minutes].sort((a, b) => a[0] - b[0])) {
      hours.set(Math.floor(minute / 60), (hours.get(Math.floor(minute / 60)) ?? 0) + n);
      writes.push(statementOf(trx('stats_created_minutes')
        .insert({ minute, created: n })
        .onConflict('minute')
        .merge({ created: trx.raw('?? + ?', ['stats_created_minutes.created', n]) })));
    }
    for (const [hour, n] of hours) {
      writes.push(statementOf(trx('stats_created_hours')
        .insert({ hour, created: n })
        .onConflict('hour')
        .merge({ created: trx.raw('?? + ?', ['stats_created_hours.created', n]) })));
    }
    await runStatements(trx, writes);
    return counted;
  }

  /**
   * Records the digests, skipping any already there (also one a concurrent transaction of another
   * replica commits meanwhile: the row lock makes this wait for it); answers how many rows it wrote.
   */
  private async insertSeenUnlessKnown(trx: Knex.Transaction, digests: readonly string[], seenAt: number): Promise<number> {
    const values: Knex.RawBinding[] = [];
    for (const digest of digests) values.push(digest, seenAt);
    const result: unknown = await trx.raw(`${this.insertIgnore} into \`stats_seen_events\` (\`id_digest\`, \`seen_at\`) values ${digests.map(() => '(?, ?)').join(', ')}`, values);
    // mysql2 answers [ResultSetHeader, undefined]; SQLite { changes }.
    const header = (Array.isArray(result) ? result[0] : result) as { affectedRows?: number; changes?: number };
    return Number(header.affectedRows ?? header.changes ?? -1);
  }

  counters(): Promise<Counters> {
    return withDatabase(async () => {
      const rows: Array<{ name: string; value: unknown }> = await this.knex('stats_counters').select('name', 'value');
      return countersFrom(rows);
    });
  }

  /**
   * One statement (a UNION ALL of the three parts), so an answer costs one round trip, and its
   * parts are one consistent read.
   */
  current(recentFromMinute: number, recentToMinute: number, heartbeatsSince: number): Promise<CurrentState> {
    return withDatabase(async () => {
      const result: unknown = await this.knex.raw(this.currentSql, [recentFromMinute, recentToMinute, heartbeatsSince]);
      const rows = rowsOfRawSelect<CurrentStateRow>(this.knex, result);
      const counters = countersFrom(rows.filter((r) => r.part === 'counter').map((r) => ({ name: String(r.name), value: r.value })));
      const recentCreated = num(rows.find((r) => r.part === 'recent')?.value);
      const heartbeats = rows.filter((r) => r.part === 'heartbeat').map((r) => ({
        service: String(r.name),
        instance: String(r.instance),
        components: JSON.parse(String(r.components)) as Record<string, string>,
        observedAt: num(r.value),
      }));
      return { counters, recentCreated, heartbeats };
    });
  }

  /** The three parts of current() in one UNION ALL; its values in this order: from, to, since. */
  private currentQuery(recentFromMinute: number, recentToMinute: number, heartbeatsSince: number): Knex.QueryBuilder {
    const k = this.knex;
    return k('stats_counters')
      .select(k.raw("'counter' as part"), 'name', 'value', k.raw('null as instance'), k.raw('null as components'))
      .unionAll(k('stats_created_minutes')
        .select(k.raw("'recent'"), k.raw('null'), k.raw('coalesce(sum(created), 0)'), k.raw('null'), k.raw('null'))
        .whereBetween('minute', [recentFromMinute, recentToMinute]))
      .unionAll(k('stats_heartbeats')
        .select(k.raw("'heartbeat'"), 'service', 'observed_at', 'instance', 'components')
        .where('observed_at', '>=', heartbeatsSince));
  }

  createdBetween(fromMinute: number, toMinute: number): Promise<number> {
    return withDatabase(async () => {
      const ranges = bucketRanges(fromMinute, toMinute);
      const sums: Array<Promise<number>> = ranges.minutes.map(async ([a, b]) => {
        const row = await this.knex('stats_created_minutes').whereBetween('minute', [a, b]).sum({ total: 'created' }).first();
        return num(row?.total);
      });
      if (ranges.hours) {
        const [a, b] = ranges.hours;
        sums.push(this.knex('stats_created_hours').whereBetween('hour', [a, b]).sum({ total: 'created' }).first()
          .then((row) => num(row?.total)));
      }
      return (await Promise.all(sums)).reduce((total, n) => total + n, 0);
    });
  }

  recordHeartbeat(heartbeat: HeartbeatRecord): Promise<void> {
    return withDatabase(() => this.knex.transaction(async (trx) => {
      const key = { service: heartbeat.service, instance: heartbeat.instance };
      const existing = await trx('stats_heartbeats').where(key).first('observed_at');
      // A late copy (a retry, a backlog) never makes a component look older than it is.
      if (existing && num(existing.observed_at) > heartbeat.observedAt) return;
      await trx('stats_heartbeats')
        .insert({ ...key, components: JSON.stringify(heartbeat.components), observed_at: heartbeat.observedAt })
        .onConflict(['service', 'instance'])
        .merge(['components', 'observed_at']);
    }));
  }

  heartbeatsSince(since: number): Promise<HeartbeatRecord[]> {
    return withDatabase(async () => {
      const rows: Array<{ service: string; instance: string; components: string; observed_at: unknown }> =
        await this.knex('stats_heartbeats').where('observed_at', '>=', since).select('service', 'instance', 'components', 'observed_at');
      return rows.map((r) => ({
        service: r.service,
        instance: r.instance,
        components: JSON.parse(r.components) as Record<string, string>,
        observedAt: num(r.observed_at),
      }));
    });
  }

  prune(limits: PruneLimits): Promise<{ seen: number; buckets: number; heartbeats: number }> {
    return withDatabase(async () => {
      const seen = await this.knex('stats_seen_events').where('seen_at', '<', limits.seenBefore).delete();
      const minutes = await this.knex('stats_created_minutes').where('minute', '<', limits.bucketsBeforeMinute).delete();
      const hours = await this.knex('stats_created_hours').where('hour', '<', Math.floor(limits.bucketsBeforeMinute / 60)).delete();
      const heartbeats = await this.knex('stats_heartbeats').where('observed_at', '<', limits.heartbeatsBefore).delete();
      return { seen, buckets: minutes + hours, heartbeats };
    });
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

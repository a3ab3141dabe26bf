import fc from 'fast-check';
import type { Knex } from 'knex';
import { migrateToLatest, rollbackAll } from '../../src/adapters/db/migrate';
import type { CounterDelta, StatsStore } from '../../src/domain/stats-store';

export interface StoreHarness {
  store: StatsStore;
  knex: Knex;
  cleanup(): Promise<void>;
}

const created = (minute: number, n = 1): CounterDelta => ({ created: n, ended: 0, endedRead: 0, accessed: 0, failedAccess: 0, lateBucketWrites: 1, createdMinute: minute });
const ended = (read: boolean): CounterDelta => ({ created: 0, ended: 1, endedRead: read ? 1 : 0, accessed: 0, failedAccess: 0, lateBucketWrites: 0 });

/** The StatsStore contract (STYLE H4), run on SQLite and on MariaDB. */
export function statsStoreContract(name: string, makeHarness: () => Promise<StoreHarness>): void {
  describe(`${name}: StatsStore contract`, () => {
    let h: StoreHarness;
    let counter = 0;
    const nextId = () => `id-${(counter += 1)}-${Math.random()}`;

    beforeAll(async () => {
      h = await makeHarness();
      await migrateToLatest(h.knex);
    });
    afterAll(async () => {
      await h?.cleanup();
    });

    it('when migrations are rolled back and applied again, then the schema comes back empty and usable', async () => {
      await rollbackAll(h.knex);
      expect(await h.knex.schema.hasTable('stats_counters')).toBe(false);
      await migrateToLatest(h.knex);
      expect(await h.store.counters()).toEqual({ created: 0, ended: 0, endedRead: 0, accessed: 0, failedAccess: 0, lateBucketWrites: 0 });
    });

    it('when the same event id is applied twice, then the second time changes nothing', async () => {
      const before = await h.store.counters();
      const id = nextId();
      expect(await h.store.applyOnce(id, ended(true), Date.now())).toBe(true);
      expect(await h.store.applyOnce(id, ended(true), Date.now())).toBe(false);
      const after = await h.store.counters();
      expect(after.ended - before.ended).toBe(1);
      expect(after.endedRead - before.endedRead).toBe(1);
    });

    it('when a batch holds new ids, an id seen before and an id twice, then each new id counts once', async () => {
      const before = await h.store.counters();
      const old = nextId();
      await h.store.applyOnce(old, ended(true), 1);
      const a = nextId();
      const b = nextId();
      const results = await h.store.applyBatch([
        { eventIdDigest: a, delta: created(28_000_000) },
        { eventIdDigest: old, delta: ended(true) },
        { eventIdDigest: b, delta: ended(false) },
        { eventIdDigest: a, delta: created(28_000_000) },
        { eventIdDigest: nextId(), delta: created(28_000_061, 1) },
      ], 2);
      expect(results).toEqual([true, false, true, false, true]);
      const after = await h.store.counters();
      expect(after.created - before.created).toBe(2);
      expect(after.ended - before.ended).toBe(2);
      expect(after.endedRead - before.endedRead).toBe(1);
      expect(await h.store.createdBetween(28_000_000, 28_000_061)).toBe(2);
    });

    it('when two replicas apply the same event at once, then it counts once (the loser fails and, retried, sees a duplicate)', async () => {
      const before = await h.store.counters();
      const id = nextId();
      const results = await Promise.allSettled([h.store.applyOnce(id, ended(false), 1), h.store.applyOnce(id, ended(false), 1)]);
      const retried = await Promise.all(results.filter((r) => r.status === 'rejected').map(() => h.store.applyOnce(id, ended(false), 1)));
      const counted = [...results.map((r) => r.status === 'fulfilled' && r.value), ...retried].filter(Boolean);
      expect(counted).toHaveLength(1);
      expect((await h.store.counters()).ended - before.ended).toBe(1);
    });

    it('when creations land in random minutes, then every window sums exactly what a naive count says', async () => {
      const base = 29_000_000; // minutes since the epoch (the year 2025)
      const events = fc.sample(fc.integer({ min: 0, max: 45 * 1440 }), { numRuns: 150, seed: 42 });
      const perMinute = new Map<number, number>();
      for (const offset of events) {
        await h.store.applyOnce(nextId(), created(base + offset), Date.now());
        perMinute.set(base + offset, (perMinute.get(base + offset) ?? 0) + 1);
      }
      const naive = (from: number, to: number) => [...perMinute].reduce((n, [m, c]) => (m >= from && m <= to ? n + c : n), 0);
      const windows = fc.sample(fc.tuple(fc.integer({ min: -100, max: 46 * 1440 }), fc.integer({ min: 0, max: 31 * 1440 })), { numRuns: 40, seed: 7 });
      for (const [start, length] of [...windows, [0, 30 * 1440 - 1], [17, 1440 - 1], [59, 1]] as Array<[number, number]>) {
        expect(await h.store.createdBetween(base + start, base + start + length)).toBe(naive(base + start, base + start + length));
      }
    }, 30_000);

    it('when pruning, then old seen ids, buckets and heartbeats go and recent ones stay', async () => {
      const oldId = nextId();
      const newId = nextId();
      await h.store.applyOnce(oldId, ended(false), 1_000);
      await h.store.applyOnce(newId, ended(false), 5_000);
      await h.store.applyOnce(nextId(), created(10), 5_000);
      await h.store.recordHeartbeat({ service: 'notes', instance: 'gone', components: { database: 'healthy' }, observedAt: 1_000 });
      const result = await h.store.prune({ seenBefore: 2_000, bucketsBeforeMinute: 100, heartbeatsBefore: 2_000 });
      expect(result.seen).toBeGreaterThanOrEqual(1);
      expect(result.buckets).toBeGreaterThanOrEqual(2);
      expect(result.heartbeats).toBe(1);
      // The pruned id is forgotten (which is why retention must outlast any redelivery); the recent one is not.
      expect(await h.store.applyOnce(newId, ended(false), 6_000)).toBe(false);
      expect(await h.store.applyOnce(oldId, ended(false), 6_000)).toBe(true);
      expect(await h.store.createdBetween(0, 99)).toBe(0);
    });

    it('when the current state is read, then it is counters, the recent minutes and fresh heartbeats, in one statement', async () => {
      await h.store.applyBatch([
        { eventIdDigest: nextId(), delta: created(30_000_000, 1) },
        { eventIdDigest: nextId(), delta: created(30_000_001, 1) },
        { eventIdDigest: nextId(), delta: created(30_000_001, 1) },
        { eventIdDigest: nextId(), delta: created(29_999_990, 1) }, // outside the recent minutes
        { eventIdDigest: nextId(), delta: ended(true) },
      ], 3);
      // Older than what the heartbeat test below asks for, so that it sees none of these.
      await h.store.recordHeartbeat({ service: 'stats', instance: 's1', components: { database: 'healthy' }, observedAt: 5_000_000 });
      await h.store.recordHeartbeat({ service: 'stats', instance: 's2', components: { database: 'unhealthy' }, observedAt: 1_000 });
      const statements: string[] = [];
      const onQuery = (query: { sql: string }): void => { statements.push(query.sql); };
      h.knex.on('query', onQuery);
      let state: Awaited<ReturnType<StatsStore['current']>>;
      try {
        state = await h.store.current(30_000_000, 30_000_001, 4_000_000);
      } finally {
        h.knex.off('query', onQuery);
      }
      expect(statements).toHaveLength(1);
      expect(state.counters).toEqual(await h.store.counters());
      expect(state.recentCreated).toBe(3);
      expect(state.recentCreated).toBe(await h.store.createdBetween(30_000_000, 30_000_001));
      expect(state.heartbeats).toEqual(await h.store.heartbeatsSince(4_000_000));
      expect(state.heartbeats).toEqual([{ service: 'stats', instance: 's1', components: { database: 'healthy' }, observedAt: 5_000_000 }]);
      const empty = await h.store.current(1, 2, 99_000_000_000);
      expect(empty.recentCreated).toBe(0);
      expect(empty.heartbeats).toEqual([]);
    });

    it('when heartbeats arrive, then the newest per instance is kept and a late older copy does not replace it', async () => {
      await h.store.recordHeartbeat({ service: 'mailer', instance: 'm1', components: { email: 'configured' }, observedAt: 10_000_000 });
      await h.store.recordHeartbeat({ service: 'mailer', instance: 'm1', components: { email: 'unhealthy' }, observedAt: 9_000_000 });
      await h.store.recordHeartbeat({ service: 'notes', instance: 'n1', components: { database: 'healthy', encryption: 'available' }, observedAt: 10_000_001 });
      const beats = await h.store.heartbeatsSince(9_500_000);
      expect(beats.sort((a, b) => a.service.localeCompare(b.service))).toEqual([
        { service: 'mailer', instance: 'm1', components: { email: 'configured' }, observedAt: 10_000_000 },
        { service: 'notes', instance: 'n1', components: { database: 'healthy', encryption: 'available' }, observedAt: 10_000_001 },
      ]);
      expect(await h.store.ping()).toBe(true);
    });
  });
}

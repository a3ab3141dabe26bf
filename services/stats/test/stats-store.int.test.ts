import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '@vanish/testkit/mariadb';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { KnexStatsStore } from '../src/adapters/db/knex-stats-store';
import { FakeStatsStore } from '../src/adapters/fakes/fake-stats-store';
import { statsStoreContract } from './contract/stats-store.contract';

statsStoreContract('KnexStatsStore on SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-stats-store-'));
  const knex = configureKnex(`sqlite:${join(dir, 'stats.db')}`);
  return {
    store: new KnexStatsStore(knex),
    knex,
    cleanup: async () => {
      await knex.destroy();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

statsStoreContract('KnexStatsStore on MariaDB', async () => {
  const db = await createTestDatabase('vanish_stats');
  const knex = configureKnex(db.url);
  return {
    store: new KnexStatsStore(knex),
    knex,
    cleanup: async () => {
      await knex.destroy();
      await db.drop();
    },
  };
});

// The fake must keep the same promises as the real stores (the migration case aside, it has no schema).
describe('FakeStatsStore', () => {
  it('when an id is applied twice, then it counts once, like the knex store', async () => {
    const store = new FakeStatsStore();
    const delta = { created: 0, ended: 1, endedRead: 1, accessed: 0, failedAccess: 0, lateBucketWrites: 0 };
    expect(await store.applyOnce('a', delta, 1)).toBe(true);
    expect(await store.applyOnce('a', delta, 1)).toBe(false);
    expect(await store.counters()).toMatchObject({ ended: 1, endedRead: 1 });
  });
});

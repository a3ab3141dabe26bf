import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { KnexMailerStore } from '../src/adapters/db/knex-mailer-store';
import { migrateToLatest, rollbackAll } from '../src/adapters/db/migrate';
import { FakeMailerStore } from '../src/adapters/fakes/fake-mailer-store';
import { mailerStoreContract } from './contract/mailer-store.contract';

// Bounds that only catch hangs: creating a database and racing two migrations is slow on a busy machine.
// A hang bound only: two replicas migrating a fresh MariaDB database take turns under knex's lock,
// and DDL on a loaded machine can take tens of seconds.
jest.setTimeout(90_000);
// In full CI runs on the loaded 2-core machine tests of this file went past their bounds (two replicas
// taking turns at migrating MariaDB; the broker noticing a killed consumer through the proxy); the
// bounds now allow for that. One retry, with the first failure logged, stays until a few full runs
// show no first failures (closing note of session 1); then remove it.
jest.retryTimes(1, { logErrorsBeforeRetry: true });

mailerStoreContract('fake', async () => ({ store: new FakeMailerStore() }), async () => {});

let dir: string;
let sqlite: Knex | undefined;
mailerStoreContract('knex on SQLite', async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailer-store-'));
  sqlite = configureKnex(`sqlite:${join(dir, 'mailer.db')}`);
  await migrateToLatest(sqlite);
  return { store: new KnexMailerStore(sqlite) };
}, async () => {
  await sqlite?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

let db: TestDatabase;
let mysqlA: Knex | undefined;
let mysqlB: Knex | undefined;
mailerStoreContract('knex on MariaDB (two replicas)', async () => {
  db = await createTestDatabase('vanish_mailer');
  mysqlA = configureKnex(db.url);
  mysqlB = configureKnex(db.url);
  // Both replicas migrate at once: the second waits for the first's lock.
  await Promise.all([migrateToLatest(mysqlA), migrateToLatest(mysqlB)]);
  return { store: new KnexMailerStore(mysqlA), replica: new KnexMailerStore(mysqlB) };
}, async () => {
  await mysqlA?.destroy();
  await mysqlB?.destroy();
  await db.drop();
});

describe('mailer migrations', () => {
  it('when migrated, rolled back entirely and migrated again on MariaDB and SQLite, then it works each time', async () => {
    const test = await createTestDatabase('vanish_mailer');
    const d = mkdtempSync(join(tmpdir(), 'mailer-mig-'));
    for (const knex of [configureKnex(test.url), configureKnex(`sqlite:${join(d, 'm.db')}`)]) {
      try {
        await migrateToLatest(knex);
        await rollbackAll(knex);
        expect(await knex.schema.hasTable('mailer_deliveries')).toBe(false);
        await migrateToLatest(knex);
        expect(await knex.schema.hasTable('mailer_deliveries')).toBe(true);
      } finally {
        await knex.destroy();
      }
    }
    await test.drop();
    rmSync(d, { recursive: true, force: true });
  });
});

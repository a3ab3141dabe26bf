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
jest.setTimeout(30_000);
// KNOWN FLAKE, not understood yet: in full CI runs on the loaded 2-core machine a test of this file
// sometimes waits past its bound (MariaDB with two replicas / a redelivery after a kill); alone it
// passes every time. One retry, with the first failure logged, keeps CI honest about it while the
// cause is found (closing note of session 1). Remove once fixed.
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

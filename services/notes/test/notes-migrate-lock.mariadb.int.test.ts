import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { MIGRATION_CONFIG, MIGRATION_NAMES, migrateToLatest } from '../src/adapters/db/migrate';

// knex fills its lock table by "select, then insert if empty": two replicas starting together on a
// fresh database can both insert a row, and with two rows nobody could ever take the lock again
// (seen in CI: two mailer processes waited for a lock no one held until they gave up).
describe('migrations on MariaDB when the lock table has two rows', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase('vanish_notes_lock');
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('when replicas left two lock rows behind, then the next start repairs the lock and migrates', async () => {
    const knex = configureKnex(database.url);
    const lockTable = `${MIGRATION_CONFIG.tableName}_lock`;
    try {
      await knex.schema.createTable(lockTable, (t) => {
        t.increments('index').primary();
        t.integer('is_locked');
      });
      await knex(lockTable).insert([{ is_locked: 0 }, { is_locked: 0 }]);
      await expect(migrateToLatest(knex, 5_000)).resolves.toEqual([...MIGRATION_NAMES]);
      expect(await knex(lockTable).select('is_locked')).toEqual([{ is_locked: 0 }]);
      // And the lock goes on working: a second run finds nothing to do.
      await expect(migrateToLatest(knex, 5_000)).resolves.toEqual([]);
    } finally {
      await knex.destroy();
    }
  });
});

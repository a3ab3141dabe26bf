import type { Knex } from 'knex';
import * as createMailerTables from '../../migrations/20261122030000_create_mailer_tables';

type Migration = { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> };

/** Listed here, not found on disk, so migrations run the same under jest (ts) and from dist (js). */
const MIGRATIONS: ReadonlyArray<[string, Migration]> = [
  ['20261122030000_create_mailer_tables', createMailerTables],
];

const source: Knex.MigrationSource<string> = {
  getMigrations: async () => MIGRATIONS.map(([name]) => name),
  getMigrationName: (name) => name,
  getMigration: async (name) => MIGRATIONS.find(([n]) => n === name)![1],
};

const config: Knex.MigratorConfig = {
  migrationSource: source,
  tableName: 'mailer_knex_migrations',
  // (knex derives the lock table's name from tableName)
};

/**
 * Migrates under knex's migration lock. Replicas starting together: the one that finds the lock
 * taken (or loses the race to create knex's own bookkeeping tables) waits and tries again.
 */
export async function migrateToLatest(knex: Knex, attempts = 60): Promise<void> {
  for (let i = 1; ; i += 1) {
    try {
      await knex.migrate.latest(config);
      return;
    } catch (err) {
      if (i >= attempts || !isMigrationRace(err)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

export async function rollbackAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback(config, true);
}

function isMigrationRace(err: unknown): boolean {
  const message = (err as Error)?.message ?? '';
  return /already locked/i.test(message) || /mailer_knex_migrations(_lock)?['`]? already exists/i.test(message);
}

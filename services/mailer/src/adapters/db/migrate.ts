import type { Knex } from 'knex';
import { migrateUnderLock } from '@vanish/common';
import * as createMailerTables from '../../migrations/20261122030000_create_mailer_tables';
import * as indexQuotaByKind from '../../migrations/20261125090000_index_quota_by_kind';

type Migration = { up(knex: Knex): Promise<void>; down(knex: Knex): Promise<void> };

/** Listed here, not found on disk, so migrations run the same under jest (ts) and from dist (js). */
const MIGRATIONS: ReadonlyArray<[string, Migration]> = [
  ['20261122030000_create_mailer_tables', createMailerTables],
  ['20261125090000_index_quota_by_kind', indexQuotaByKind],
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

/** Runs pending migrations; replicas starting together take turns (common's migrateUnderLock). */
export async function migrateToLatest(knex: Knex, waitMs?: number): Promise<void> {
  await migrateUnderLock(knex, config, waitMs);
}

export async function rollbackAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback(config, true);
}

import type { Knex } from 'knex';
import { migrateUnderLock } from '@vanish/common';
import * as createWebhookTables from '../../migrations/20261125100000_create_webhook_tables';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order, listed statically so they run the same under jest and from dist. */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['20261125100000_create_webhook_tables', createWebhookTables],
];

class StaticMigrationSource implements Knex.MigrationSource<readonly [string, Migration]> {
  async getMigrations() {
    return [...MIGRATIONS];
  }
  getMigrationName(migration: readonly [string, Migration]): string {
    return migration[0];
  }
  async getMigration(migration: readonly [string, Migration]): Promise<Knex.Migration> {
    return migration[1];
  }
}

/** Own bookkeeping tables, so webhooks can share a database with others without colliding. */
export const MIGRATION_CONFIG: Knex.MigratorConfig = {
  migrationSource: new StaticMigrationSource(),
  tableName: 'webhooks_knex_migrations',
};

/** Runs pending migrations; replicas starting together take turns (common's migrateUnderLock). */
export function migrateToLatest(knex: Knex, waitMs?: number): Promise<string[]> {
  return migrateUnderLock(knex, MIGRATION_CONFIG, waitMs);
}

export async function rollbackAll(knex: Knex): Promise<string[]> {
  const [, reverted] = (await knex.migrate.rollback(MIGRATION_CONFIG, true)) as [number, string[]];
  return reverted;
}

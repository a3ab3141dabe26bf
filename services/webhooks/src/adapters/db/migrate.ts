import type { Knex } from 'knex';
import { migrateUnderLock, staticMigrations, type Migration } from '@vanish/common';
import * as createWebhookTables from '../../migrations/20261125100000_create_webhook_tables';

/** Every migration, in order, listed statically so they run the same under jest and from dist. */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['20261125100000_create_webhook_tables', createWebhookTables],
];

/** Own bookkeeping tables, so webhooks can share a database with others without colliding. */
export const MIGRATION_CONFIG: Knex.MigratorConfig = staticMigrations('webhooks_knex_migrations', MIGRATIONS);

/** Runs pending migrations; replicas starting together take turns (common's migrateUnderLock). */
export function migrateToLatest(knex: Knex, waitMs?: number): Promise<string[]> {
  return migrateUnderLock(knex, MIGRATION_CONFIG, waitMs);
}

export async function rollbackAll(knex: Knex): Promise<string[]> {
  const [, reverted] = (await knex.migrate.rollback(MIGRATION_CONFIG, true)) as [number, string[]];
  return reverted;
}

import type { Knex } from 'knex';
import { migrateUnderLock, staticMigrations, type Migration } from '@vanish/common';
import * as createStatsTables from '../../migrations/20261122032000_create_stats_tables';
import * as addLateBucketCounter from '../../migrations/20261122040000_add_late_bucket_counter';

/** Every migration, in order, listed statically so they run the same under jest and from dist. */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['20261122032000_create_stats_tables', createStatsTables],
  ['20261122040000_add_late_bucket_counter', addLateBucketCounter],
];

/** Own bookkeeping tables, so stats can share a database with others without colliding. */
export const MIGRATION_CONFIG: Knex.MigratorConfig = staticMigrations('stats_knex_migrations', MIGRATIONS);

/** Runs pending migrations; replicas starting together take turns (common's migrateUnderLock). */
export function migrateToLatest(knex: Knex, waitMs?: number): Promise<string[]> {
  return migrateUnderLock(knex, MIGRATION_CONFIG, waitMs);
}

export async function rollbackAll(knex: Knex): Promise<string[]> {
  const [, reverted] = (await knex.migrate.rollback(MIGRATION_CONFIG, true)) as [number, string[]];
  return reverted;
}

import type { Knex } from 'knex';
import { migrateUnderLock, staticMigrations, type Migration } from '@vanish/common';
import * as createMailerTables from '../../migrations/20261122030000_create_mailer_tables';
import * as indexQuotaByKind from '../../migrations/20261125090000_index_quota_by_kind';
import * as addAttemptLease from '../../migrations/20261125230000_add_attempt_lease';

/** Listed here, not found on disk, so migrations run the same under jest (ts) and from dist (js). */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['20261122030000_create_mailer_tables', createMailerTables],
  ['20261125090000_index_quota_by_kind', indexQuotaByKind],
  ['20261125230000_add_attempt_lease', addAttemptLease],
];

const config = staticMigrations('mailer_knex_migrations', MIGRATIONS);

/** Runs pending migrations; replicas starting together take turns (common's migrateUnderLock). */
export async function migrateToLatest(knex: Knex, waitMs?: number): Promise<void> {
  await migrateUnderLock(knex, config, waitMs);
}

export async function rollbackAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback(config, true);
}

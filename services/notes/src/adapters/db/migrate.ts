import type { Knex } from 'knex';
import * as createNotes from '../../migrations/20261122031500_create_notes';
import * as createOutbox from '../../migrations/20261122031600_create_outbox';
import * as createUsedFormTokens from '../../migrations/20261122040000_create_used_form_tokens';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/** Every migration, in order. Listed statically so they run the same under jest and from dist. */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['20261122031500_create_notes', createNotes],
  ['20261122031600_create_outbox', createOutbox],
  ['20261122040000_create_used_form_tokens', createUsedFormTokens],
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

/** The notes service's own bookkeeping tables, so it can share a database without colliding. */
export const MIGRATION_CONFIG: Knex.MigratorConfig = {
  migrationSource: new StaticMigrationSource(),
  tableName: 'notes_knex_migrations',
};

/**
 * Runs pending migrations under knex's migration lock. Replicas starting together wait for the
 * one holding the lock (up to `waitMs`) instead of failing, then find nothing left to do.
 */
export async function migrateToLatest(knex: Knex, waitMs = 60_000): Promise<string[]> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const [, applied] = (await knex.migrate.latest(MIGRATION_CONFIG)) as [number, string[]];
      return applied;
    } catch (err) {
      if (!isStartupRace(err) || Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/**
 * Another replica holds the migration lock, or created knex's bookkeeping tables (which knex does
 * outside the lock) a moment before us: wait and try again.
 */
function isStartupRace(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown };
  if (e.name === 'MigrationLocked') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return message.includes(MIGRATION_CONFIG.tableName as string) && /already exists|duplicate/i.test(message);
}

/** Rolls every migration back (tests and operators only). */
export async function rollbackAll(knex: Knex): Promise<string[]> {
  const [, reverted] = (await knex.migrate.rollback(MIGRATION_CONFIG, true)) as [number, string[]];
  return reverted;
}

export const MIGRATION_NAMES: readonly string[] = MIGRATIONS.map(([name]) => name);

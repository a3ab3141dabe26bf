// Types only: each service brings its own knex; common does not load it.
import type { Knex } from 'knex';

/**
 * Runs pending migrations under knex's migration lock, for replicas that start together on one
 * database. Returns the names applied. The ones that find the lock taken, or lose the race to
 * create knex's bookkeeping tables (knex does that outside the lock), wait and try again, up to
 * `waitMs`, then find nothing left to do.
 *
 * knex fills its lock table by "select, then insert a row if empty", so two replicas on a fresh
 * database can both insert one. With two rows its lock (`update … set is_locked = 1 where
 * is_locked = 0`, expecting one row) can never be taken again, by anyone, after any restart. While
 * there are two rows nobody can hold the lock (the update of two rows is rolled back), so the
 * extra rows are deleted and the lock works again.
 */
export async function migrateUnderLock(knex: Knex, config: Knex.MigratorConfig, waitMs = 60_000): Promise<string[]> {
  const tableName = config.tableName ?? 'knex_migrations';
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      const [, applied] = (await knex.migrate.latest(config)) as [number, string[]];
      return applied;
    } catch (err) {
      if (!isStartupRace(err, tableName) || Date.now() > deadline) throw err;
      if ((err as Error).name === 'MigrationLocked') await removeExtraLockRows(knex, `${tableName}_lock`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function isStartupRace(err: unknown, tableName: string): boolean {
  const e = err as { name?: unknown; message?: unknown };
  if (e.name === 'MigrationLocked') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return message.includes(tableName) && /already exists|duplicate/i.test(message);
}

async function removeExtraLockRows(knex: Knex, lockTable: string): Promise<void> {
  const rows: Array<{ index: number }> = await knex(lockTable).select('index').orderBy('index');
  if (rows.length > 1) await knex(lockTable).where('index', '>', rows[0]!.index).andWhere('is_locked', 0).delete();
}

export interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

/**
 * A service's migrations listed in code, in order (so they run the same under jest and from dist), and
 * the table that records them (each service its own, so services can share a database without colliding).
 */
export function staticMigrations(tableName: string, migrations: ReadonlyArray<readonly [string, Migration]>): Knex.MigratorConfig {
  const source: Knex.MigrationSource<readonly [string, Migration]> = {
    getMigrations: async () => [...migrations],
    getMigrationName: (migration) => migration[0],
    getMigration: async (migration) => migration[1],
  };
  return { migrationSource: source, tableName };
}

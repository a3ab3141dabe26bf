import { configureKnex as configureDatabase, type ConfigureKnexOptions } from '@vanish/database';
import { createLogger } from '@vanish/common';
import type { Knex } from 'knex';

export { databaseDialect, isDatabaseUnavailable, type DatabaseDialect } from '@vanish/database';

/**
 * The stats service's database (the shared set-up in @vanish/database, STYLE H8): a pool of 5,
 * and SQLite `synchronous = NORMAL` (WAL stays consistent; a power cut may lose the last commits,
 * which for counters on a laptop was judged acceptable).
 */
export function configureKnex(databaseUrl: string, options: Partial<ConfigureKnexOptions> = {}): Knex {
  return configureDatabase(databaseUrl, {
    poolMax: 5,
    sqliteSynchronous: 'NORMAL',
    ...options,
    logger: options.logger ?? createLogger('stats', 'warn').child('stats/db'),
  });
}

/**
 * The rows of a `knex.raw` select: mysql2 answers `[rows, fields]`, SQLite the rows themselves
 * (the query builder hides this; raw statements do not).
 */
export function rowsOfRawSelect<Row>(knex: Knex, result: unknown): Row[] {
  return (isMysql(knex) ? (result as [Row[], unknown])[0] : result) as Row[];
}

/** MySQL or MariaDB (mysql2), as opposed to SQLite: raw SQL and raw results differ between the two. */
export function isMysql(knex: Knex): boolean {
  return (knex.client as { config?: { client?: unknown } }).config?.client === 'mysql2';
}

import { configureKnex as configureDatabase, type ConfigureKnexOptions } from '@vanish/database';
import { createLogger } from '@vanish/common';
import type { Knex } from 'knex';

export { databaseDialect, isDatabaseUnavailable, type DatabaseDialect } from '@vanish/database';

/**
 * The notes service's database (the shared set-up in @vanish/database, STYLE H8) with what notes
 * needs of it: SQLite `synchronous = FULL` (a destruction that committed must survive a power
 * cut), and on MySQL READ COMMITTED, so that reads after a locking UPDATE see the latest committed
 * row (see KnexNoteStore.lock), in a UTC session, each connection knowing which server it is on.
 */
export function configureKnex(databaseUrl: string, options: Partial<ConfigureKnexOptions> = {}): Knex {
  return configureDatabase(databaseUrl, {
    sqliteSynchronous: 'FULL',
    mysqlSessionStatements: ['SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', "SET SESSION time_zone = '+00:00'"],
    // An unconfirmed commit's connection is ended by its id, only on the server that gave it (commit-outcome.ts).
    recordServerInstance: true,
    ...options,
    logger: options.logger ?? createLogger('notes', 'warn').child('notes/db'),
  });
}

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Logger } from '@vanish/common';

/** The one place that knows the SQL dialects: `sqlite:PATH` (embedded default) or `mysql://...`. */
export function configureKnex(databaseUrl: string, logger?: Logger): Knex {
  const log = logger ? knexLog(logger) : undefined;
  if (databaseUrl.startsWith('sqlite:')) {
    const filename = databaseUrl.slice('sqlite:'.length);
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
    return knexFactory({
      log,
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate: (conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
          conn.pragma('journal_mode = WAL');
          conn.pragma('busy_timeout = 5000');
          conn.pragma('foreign_keys = ON');
          done(null, conn);
        },
      },
    });
  }
  const url = new URL(databaseUrl.replace(/^mysql2:/, 'mysql:'));
  return knexFactory({
    log,
    client: 'mysql2',
    connection: {
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.replace(/^\//, ''),
      charset: 'utf8mb4',
      timezone: 'Z',
      decimalNumbers: true,
      connectTimeout: 5_000,
    },
    pool: { min: 0, max: 10 },
    acquireConnectionTimeout: 10_000,
  });
}

export function isSqlite(knex: Knex): boolean {
  const client = knex.client.config.client;
  return client === 'better-sqlite3' || client === 'sqlite3';
}

/** knex's own messages (pool timeouts, deprecations) go to the service log, not the console. */
function knexLog(logger: Logger): Knex.Config['log'] {
  const text = (message: unknown) => (message instanceof Error ? message.message : String(message));
  return {
    warn: (message: unknown) => logger.warn('database driver warning', { detail: text(message) }),
    error: (message: unknown) => logger.error('database driver error', { detail: text(message) }),
    deprecate: (message: unknown) => logger.debug('database driver deprecation', { detail: text(message) }),
    debug: (message: unknown) => logger.debug('database driver debug', { detail: text(message) }),
  };
}

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';

/**
 * The only file of the stats service that knows which database is behind knex (STYLE H8):
 * `sqlite:PATH` (better-sqlite3, WAL) for the embedded default, `mysql://user:pass@host:port/db`
 * (mysql2: utf8mb4, UTC, decimals as numbers, short connect timeouts) when deployed.
 */
export type DatabaseDialect = 'sqlite' | 'mysql';

export function databaseDialect(databaseUrl: string): DatabaseDialect {
  if (databaseUrl.startsWith('sqlite:')) return 'sqlite';
  if (databaseUrl.startsWith('mysql://')) return 'mysql';
  throw new Error('DATABASE_URL must be sqlite:PATH or mysql://user:pass@host:port/db');
}

export function configureKnex(databaseUrl: string, options: { poolMax?: number; connectTimeoutMs?: number } = {}): Knex {
  return knexFactory(databaseDialect(databaseUrl) === 'sqlite' ? sqliteConfig(databaseUrl) : mysqlConfig(databaseUrl, options));
}

function sqliteConfig(databaseUrl: string): Knex.Config {
  const raw = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  if (raw === '') throw new Error('sqlite: needs a file path, e.g. sqlite:./data/stats.db');
  const filename = raw === ':memory:' ? raw : resolve(raw);
  if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
  return {
    client: 'better-sqlite3',
    connection: { filename },
    useNullAsDefault: true,
    pool: {
      min: 1,
      max: 1,
      afterCreate: (conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
        try {
          conn.pragma('journal_mode = WAL');
          conn.pragma('busy_timeout = 5000');
          conn.pragma('synchronous = NORMAL');
          conn.pragma('foreign_keys = ON');
          done(null, conn);
        } catch (err) {
          done(err as Error, conn);
        }
      },
    },
  };
}

function mysqlConfig(databaseUrl: string, options: { poolMax?: number; connectTimeoutMs?: number }): Knex.Config {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database === '') throw new Error('DATABASE_URL for mysql must name a database: mysql://user:pass@host:port/db');
  const timeout = options.connectTimeoutMs ?? 2_000;
  return {
    client: 'mysql2',
    connection: {
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database,
      charset: 'utf8mb4',
      timezone: 'Z',
      connectTimeout: timeout,
      decimalNumbers: true,
      supportBigNumbers: true,
      bigNumberStrings: false,
      enableKeepAlive: true,
    },
    acquireConnectionTimeout: timeout,
    pool: { min: 0, max: options.poolMax ?? 5, idleTimeoutMillis: 30_000 },
  };
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_DEADLOCK', 'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_FULL',
]);

/** True when an error means "the database cannot serve us right now" rather than a bug. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const e = current as { name?: unknown; code?: unknown; fatal?: unknown; message?: unknown; cause?: unknown };
    if (e.name === 'KnexTimeoutError') return true;
    if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('SQLITE_IOERR'))) return true;
    if (e.fatal === true) return true;
    if (typeof e.message === 'string' && /connection (is in closed state|lost)/i.test(e.message)) return true;
    current = e.cause;
  }
  return false;
}

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import knexFactory, { type Knex } from 'knex';
import type { Logger } from '@vanish/common';

/**
 * The only file that knows which database is behind knex (STYLE H8). `sqlite:PATH` gives the
 * embedded default (better-sqlite3, WAL); `mysql://user:pass@host:port/db` gives MySQL/MariaDB
 * through mysql2 (utf8mb4, UTC, READ COMMITTED, short timeouts so that an unreachable database
 * answers in about two seconds instead of hanging requests).
 */
export type DatabaseDialect = 'sqlite' | 'mysql';

export interface ConfigureKnexOptions {
  /** Pool size for MySQL (SQLite always uses one connection). */
  poolMax?: number;
  /** How long a query may wait for a connection, and how long connecting may take. */
  connectTimeoutMs?: number;
  /** Where knex's own warnings go (pool errors, deprecations); its console output otherwise. */
  logger?: Logger;
}

export function databaseDialect(databaseUrl: string): DatabaseDialect {
  if (databaseUrl.startsWith('sqlite:')) return 'sqlite';
  if (databaseUrl.startsWith('mysql://')) return 'mysql';
  throw new Error('DATABASE_URL must be sqlite:PATH or mysql://user:pass@host:port/db');
}

export function configureKnex(databaseUrl: string, options: ConfigureKnexOptions = {}): Knex {
  const config = databaseDialect(databaseUrl) === 'sqlite' ? sqliteConfig(databaseUrl) : mysqlConfig(databaseUrl, options);
  return knexFactory(options.logger ? { ...config, log: knexLog(options.logger) } : config);
}

function knexLog(logger: Logger): Knex.Config['log'] {
  const text = (message: unknown) => (message instanceof Error ? message.message : String(message));
  return {
    warn: (message: unknown) => logger.warn('database driver warning', { detail: text(message) }),
    // Driver errors (lost connections, pool timeouts) heal by themselves; the caller logs what fails a request.
    error: (message: unknown) => logger.warn('database driver error', { detail: text(message) }),
    deprecate: (method: string, alternative: string) => logger.debug('knex deprecation', { method, alternative }),
    debug: () => undefined,
  };
}

function sqliteConfig(databaseUrl: string): Knex.Config {
  const raw = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  if (raw === '') throw new Error('sqlite: needs a file path, e.g. sqlite:./data/notes.db');
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
          // FULL: a destruction that committed must survive a power cut (NORMAL could roll it back).
          conn.pragma('synchronous = FULL');
          conn.pragma('foreign_keys = ON');
          done(null, conn);
        } catch (err) {
          done(err as Error, conn);
        }
      },
    },
  };
}

function mysqlConfig(databaseUrl: string, options: ConfigureKnexOptions): Knex.Config {
  const url = new URL(databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database === '') throw new Error('DATABASE_URL for mysql must name a database: mysql://user:pass@host:port/db');
  const timeout = options.connectTimeoutMs ?? 2000;
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
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      idleTimeoutMillis: 30_000,
      afterCreate: (conn: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, conn: unknown) => void) => {
        // Reads after a locking UPDATE see the latest committed row (see KnexNoteStore.lock).
        conn.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', (err) => {
          if (err) {
            done(err, conn);
            return;
          }
          conn.query("SET SESSION time_zone = '+00:00'", (err2) => done(err2, conn));
        });
      },
    },
  };
}

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_CON_COUNT_ERROR', 'ER_SERVER_SHUTDOWN',
  'ER_LOCK_WAIT_TIMEOUT', 'ER_LOCK_DEADLOCK', 'SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_CANTOPEN', 'SQLITE_IOERR', 'SQLITE_FULL',
]);

/**
 * True when an error means "the database cannot serve us right now" (down, unreachable, pool
 * exhausted, overloaded) rather than a bug: the caller answers 503 and may retry.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const e = current as { name?: unknown; code?: unknown; fatal?: unknown; message?: unknown; cause?: unknown };
    if (e.name === 'KnexTimeoutError') return true;
    if (typeof e.code === 'string' && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('SQLITE_IOERR'))) return true;
    if (e.fatal === true) return true;
    if (typeof e.message === 'string' && /connection (is in closed state|lost)|Can't add new command when connection is in closed state/i.test(e.message)) return true;
    current = e.cause;
  }
  return false;
}

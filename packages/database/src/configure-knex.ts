import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import knexFactory, { type Knex } from 'knex';
import type { DependencyState, Logger } from '@vanish/common';
import { mysqlSsl, parseDatabaseUrl, type MysqlLocation } from './database-url';
import { SqliteWorkerClient } from './sqlite-worker-client';
import { recordServerInstance, serverInstanceFrom, SERVER_INSTANCE_QUERY, SERVER_INSTANCE_QUERY_MYSQL8 } from './server-instance';

/**
 * The one place that turns a DATABASE_URL into knex (STYLE H8), shared by every service that has
 * a database. `sqlite:PATH` gives the embedded default (better-sqlite3 in a worker thread, WAL); `mysql://...` gives
 * MySQL/MariaDB through mysql2 (utf8mb4, UTC, decimals as numbers, short timeouts, TLS from the
 * URL's `ssl-mode`/`ssl-ca` or `sslCa`). What differs between services are the options below.
 */
export interface ConfigureKnexOptions {
  /** Where knex's own output goes (lost connections, pool warnings, deprecations); never the console. */
  logger: Logger;
  /**
   * The service's state of its database (common's DependencyState): a connection that cannot be made
   * is reported there, and lost connections are logged at debug while it is down, so an outage is one
   * event in the log and not a driver line per connection attempt.
   */
  outage?: DependencyState;
  /** MySQL pool size (SQLite always uses one connection). Default 10. */
  poolMax?: number;
  /** How long connecting may take. Default 2000 ms: an unreachable database answers fast. */
  connectTimeoutMs?: number;
  /** How long a query may wait for a pooled connection. Default: connectTimeoutMs. */
  acquireTimeoutMs?: number;
  /** SQLite `synchronous` pragma. FULL (default): a commit survives a power cut; NORMAL may lose the last ones. */
  sqliteSynchronous?: 'FULL' | 'NORMAL';
  /** Statements run on every new MySQL connection (session settings), in order. */
  mysqlSessionStatements?: readonly string[];
  /**
   * Record, for every new MySQL connection, which server process it is on (serverInstanceOf): one
   * more statement per connection (two on MySQL 8), for a service that acts on connection ids (notes'
   * KILL of an unconfirmed commit's connection).
   */
  recordServerInstance?: boolean;
  /** CA bundle (PEM) for MySQL TLS when the URL has no `ssl-ca` (DATABASE_SSL_CA / DATABASE_SSL_CA_FILE). */
  sslCa?: string | Buffer;
}

export function configureKnex(databaseUrl: string, options: ConfigureKnexOptions): Knex {
  const location = parseDatabaseUrl(databaseUrl);
  const config = location.dialect === 'sqlite' ? sqliteConfig(location.filename, options) : mysqlConfig(location, options);
  return knexFactory({ ...config, log: knexLog(options.logger, options.outage) });
}

/**
 * knex prints through console.log unless given these (a lost connection printed
 * `Connection Error: Error: read ECONNRESET` as a bare line): every line must be our JSON.
 * knex calls each with one message.
 */
export function knexLog(logger: Logger, outage?: DependencyState): Knex.Config['log'] {
  const text = (message: unknown) => (message instanceof Error ? message.message : String(message));
  return {
    warn: (message: unknown) => {
      const detail = text(message);
      // knex's line for a connection it could not make carries the stack: the first line says it. The
      // query that waited on the connection fails too and is counted by its caller; this is not a second failure.
      if (outage && detail.startsWith('Acquire connection error')) {
        outage.seenUnreachable({ task: 'connect', err: detail.split('\n')[0] });
        return;
      }
      if (outage?.isDown) logger.debug('database driver warning', { detail });
      else logger.warn('database driver warning', { detail });
    },
    // Driver errors (lost connections, pool timeouts) heal by themselves; the caller logs what fails a request.
    error: (message: unknown) => logger.warn('database driver error', { detail: text(message) }),
    deprecate: (message: unknown) => logger.debug('knex deprecation', { detail: text(message) }),
    debug: (message: unknown) => logger.debug('database driver debug', { detail: text(message) }),
  };
}

/**
 * The database file, and its folder when new, readable by this user alone. SQLite gives its -wal and
 * -shm files the database file's permissions, so creating the file 0600 before SQLite opens it covers
 * them too; files an older version left 0644 are tightened.
 */
function privateDatabaseFile(filename: string): void {
  mkdirSync(dirname(filename), { recursive: true, mode: 0o700 });
  closeSync(openSync(filename, 'a', 0o600));
  for (const file of [filename, `${filename}-wal`, `${filename}-shm`, `${filename}-journal`]) {
    try {
      chmodSync(file, 0o600);
    } catch {
      // absent (no -wal yet) or not ours: nothing to tighten
    }
  }
}

function sqliteConfig(filename: string, options: ConfigureKnexOptions): Knex.Config {
  if (filename !== ':memory:') privateDatabaseFile(filename);
  const synchronous = options.sqliteSynchronous ?? 'FULL';
  // One connection, owned by a worker thread (sqlite-worker-client.ts): no statement runs on the thread
  // that serves HTTP. Its pragmas are set when the worker opens the database.
  return {
    client: SqliteWorkerClient as unknown as typeof Knex.Client,
    connection: { filename },
    useNullAsDefault: true,
    sqlitePragmas: ['journal_mode = WAL', `synchronous = ${synchronous}`, 'foreign_keys = ON'],
    // As busy_timeout = 5000 was, without waiting in SQLite's busy handler (it would hold the thread).
    sqliteBusyTimeoutMs: 5000,
    pool: { min: 1, max: 1 },
  } as Knex.Config;
}

type RawMysqlConnection = {
  query(sql: string, cb: (err: Error | null, rows?: unknown) => void): void;
  destroy?(): void;
  stream?: { getPeerCertificate?: () => PeerCertificate };
};

/**
 * mysql2 checks the server's name only when it dialled a host name, not an IP address: with
 * VERIFY_IDENTITY every new connection's certificate is checked here too, for either.
 */
function identityError(conn: RawMysqlConnection, host: string): Error | undefined {
  const certificate = conn.stream?.getPeerCertificate?.();
  if (!certificate || Object.keys(certificate).length === 0) return new Error(`MySQL TLS: no server certificate to verify ${host} against`);
  return checkServerIdentity(host, certificate);
}

function mysqlConfig(location: MysqlLocation, options: ConfigureKnexOptions): Knex.Config {
  const timeout = options.connectTimeoutMs ?? 2000;
  const ssl = mysqlSsl(location, options.sslCa);
  const statements = options.mysqlSessionStatements ?? [];
  const afterCreate = (conn: RawMysqlConnection, done: (err: Error | null, conn: unknown) => void) => {
    // knex neither destroys nor reuses a connection whose afterCreate failed: it would stay open on the server.
    const refuse = (err: Error): void => {
      conn.destroy?.();
      done(err, conn);
    };
    const mismatch = ssl?.verifyIdentity ? identityError(conn, location.host) : undefined;
    if (mismatch) return refuse(mismatch);
    // Optional knowledge: a connection whose server cannot say is kept, unrecorded (its KILLs are sent as before).
    const recordInstance = (): void => {
      if (!options.recordServerInstance) return done(null, conn);
      const record = (sql: string, fallback: string | undefined): void => {
        conn.query(sql, (err, rows) => {
          const errno = (err as { errno?: number } | null)?.errno;
          // 1109: unknown information_schema table (MySQL 8); 1146: no such table.
          if (err && fallback && (errno === 1109 || errno === 1146)) return record(fallback, undefined);
          try {
            if (err) throw err;
            recordServerInstance(conn, serverInstanceFrom((rows as never[] | undefined)?.[0]));
          } catch (failure) {
            options.logger.warn('could not learn which server a database connection is on', { detail: (failure as Error).message });
          }
          return done(null, conn);
        });
      };
      record(SERVER_INSTANCE_QUERY, SERVER_INSTANCE_QUERY_MYSQL8);
    };
    const next = (index: number): void => {
      if (index >= statements.length) return recordInstance();
      conn.query(statements[index]!, (err) => (err ? refuse(err) : next(index + 1)));
    };
    return next(0);
  };
  return {
    client: 'mysql2',
    connection: {
      host: location.host,
      port: location.port,
      user: location.user,
      password: location.password,
      database: location.database,
      charset: 'utf8mb4',
      timezone: 'Z',
      connectTimeout: timeout,
      decimalNumbers: true,
      supportBigNumbers: true,
      bigNumberStrings: false,
      enableKeepAlive: true,
      ...(ssl ? { ssl } : {}),
    },
    acquireConnectionTimeout: options.acquireTimeoutMs ?? timeout,
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      idleTimeoutMillis: 30_000,
      afterCreate,
    },
  };
}

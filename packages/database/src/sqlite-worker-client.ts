import { Worker } from 'node:worker_threads';
import type { Knex } from 'knex';

/**
 * SQLite off the event loop. better-sqlite3 is synchronous: every statement (and every commit's fsync)
 * runs on the calling thread, which in a service is the thread that serves HTTP. Here one worker
 * thread owns the process's SQLite connections (one per database) and runs the statements; the service's thread sends each
 * statement as a message and awaits the answer, so it serves other requests meanwhile, and the
 * machine's second core does the database work. knex still drives it (a knex client class: its SQL,
 * transactions, migrations and pool are unchanged; the pool has its one connection, so a transaction's
 * statements reach the worker in order and nothing interleaves with them).
 *
 * Durability is unchanged: the worker answers a COMMIT after SQLite has made it durable (synchronous
 * FULL by default). Statements are prepared once per connection and kept (a bounded cache).
 */

/**
 * The worker's code: plain JavaScript, run with `eval` so that the built package and its tests
 * (TypeScript) run the same. One thread serves every SQLite database of the process (the all-in-one
 * has four): each is a handle, opened and closed by message; statements of all of them run in the
 * order they arrive.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const MAX_STATEMENTS = 512;
const handles = new Map();
function asBuffer(value) {
  return value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value;
}
function prepared(handle, sql) {
  let statement = handle.statements.get(sql);
  if (statement === undefined) {
    statement = handle.db.prepare(sql);
    if (handle.statements.size >= MAX_STATEMENTS) handle.statements.clear();
    handle.statements.set(sql, statement);
  }
  return statement;
}
// One statement: its rows when it reads, its changes and last row id otherwise.
function run(handle, sql, bindings) {
  const statement = prepared(handle, sql);
  const values = bindings.map(asBuffer);
  if (statement.reader) return { rows: statement.all(values) };
  const result = statement.run(values);
  return { changes: result.changes, lastInsertRowid: result.lastInsertRowid };
}
// A transaction in one message (commitOnSqliteThread): BEGIN IMMEDIATE takes the write lock before anything else
// runs, so only it can meet another connection's lock (refused, nothing started: the whole message is tried
// again) and the statements and COMMIT after it cannot. A failure after it ends the transaction with ROLLBACK
// (not tried again). Either way the answer says that nothing of it was kept (failed, below).
function transact(handle, message) {
  run(handle, 'BEGIN IMMEDIATE', []);
  try {
    for (const statement of message.statements) run(handle, statement.sql, statement.bindings);
    run(handle, 'COMMIT', []);
  } catch (err) {
    if (handle.db.inTransaction) handle.db.exec('ROLLBACK');
    throw Object.assign(err, { rolledBack: true });
  }
}
// The answer to a message that failed. rolledBack: a transaction message left nothing (its connection is
// outside a transaction: never begun, or rolled back); false where that is not known (a failed ROLLBACK).
function failed(message, err) {
  const handle = handles.get(message.handle);
  const rolledBack = Boolean(message.transaction) && !(handle && handle.db.open && handle.db.inTransaction);
  return { id: message.id, ok: false, error: { message: err && err.message, code: err && err.code, name: err && err.name, rolledBack } };
}
// A statement that finds the database locked by another connection (notes' relay has its own on the same
// file) is tried again a moment later instead of waiting in SQLite's busy handler: that would hold this
// thread, and with it the statement that is to release the lock (the other connection's COMMIT), until the
// timeout. Each connection has one message in flight at a time (knex awaits each), so retrying keeps its order;
// a message of several statements (a deferred BEGIN, runStatements) goes on from the one that was refused.
function execute(message, startedAt) {
  const { id, handle: name } = message;
  try {
    if (message.open) {
      const db = new Database(message.open.filename, { readonly: false });
      for (const pragma of message.open.pragmas) db.pragma(pragma);
      db.pragma('busy_timeout = 0');
      handles.set(name, { db, statements: new Map(), busyTimeoutMs: message.open.busyTimeoutMs });
      parentPort.postMessage({ id, ok: true });
      return;
    }
    const handle = handles.get(name);
    if (message.close) {
      if (handle) {
        handle.statements.clear();
        handle.db.close();
        handles.delete(name);
      }
      parentPort.postMessage({ id, ok: true });
      return;
    }
    if (!handle) throw Object.assign(new Error('the SQLite connection is closed'), { code: 'SQLITE_IOERR_CLOSED' });
    try {
      if (message.begin) {
        run(handle, 'BEGIN;', []);
        message.begin = false;
      }
      if (message.transaction) {
        transact(handle, message);
        parentPort.postMessage({ id, ok: true });
      } else if (message.statements) {
        const results = message.results ?? (message.results = []);
        while (results.length < message.statements.length) {
          const next = message.statements[results.length];
          results.push(run(handle, next.sql, next.bindings));
        }
        parentPort.postMessage({ id, ok: true, results });
      } else {
        const result = run(handle, message.sql, message.bindings);
        result.id = id;
        result.ok = true;
        parentPort.postMessage(result);
      }
    } catch (err) {
      if (err && err.code === 'SQLITE_BUSY' && !err.rolledBack && Date.now() - startedAt < handle.busyTimeoutMs) {
        setTimeout(execute, 2, message, startedAt);
        return;
      }
      throw err;
    }
  } catch (err) {
    parentPort.postMessage(failed(message, err));
  }
}
parentPort.on('message', (message) => execute(message, Date.now()));
`;

/** What one statement gave: its rows when it reads, its changes and last row id otherwise. */
export interface StatementResult {
  rows?: Array<Record<string, unknown>>;
  changes?: number;
  lastInsertRowid?: number | bigint;
}

interface Answer extends StatementResult {
  id: number;
  ok: boolean;
  /** A message of several statements: what each gave, in order. */
  results?: StatementResult[];
  error?: { message: string; code?: string; name?: string; rolledBack?: boolean };
}

/** A statement in plain SQL with `?` placeholders (no knex `??` identifiers) and its values. */
export interface Statement {
  sql: string;
  bindings: readonly unknown[];
}

/** The error better-sqlite3 threw in the worker, rebuilt here with its name, message and code (SQLITE_BUSY...). */
export class SqliteWorkerError extends Error {
  /**
   * @param rolledBack a transaction sent in one message (commitOnSqliteThread) failed and was rolled back:
   * nothing of it was kept (where the thread itself failed, that is not known).
   */
  constructor(message: string, readonly code: string | undefined, name: string | undefined, readonly rolledBack = false) {
    super(message);
    if (name) this.name = name;
  }
}

type Waiting = { resolve(answer: Answer): void; reject(err: Error): void };

/**
 * The process's one SQLite thread, started with the first connection and ended with the last. Its
 * young generation is kept small: it only moves statements and rows between threads (a thread of
 * V8's default sizes costs the process tens of MB of RSS after a load).
 */
class SqliteThread {
  private static current: SqliteThread | undefined;
  private readonly worker: Worker;
  private readonly pending = new Map<number, Waiting>();
  private nextId = 1;
  private users = 0;
  failed: Error | undefined;

  static acquire(): SqliteThread {
    let thread = SqliteThread.current;
    if (!thread || thread.failed) {
      thread = new SqliteThread();
      SqliteThread.current = thread;
    }
    thread.users += 1;
    return thread;
  }

  private constructor() {
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { driver: require.resolve('better-sqlite3') },
      resourceLimits: { maxYoungGenerationSizeMb: 8 },
    });
    this.worker.on('message', (answer: Answer) => {
      const waiting = this.pending.get(answer.id);
      if (!waiting) return;
      this.pending.delete(answer.id);
      if (answer.ok) waiting.resolve(answer);
      else waiting.reject(new SqliteWorkerError(answer.error?.message ?? 'SQLite failed', answer.error?.code, answer.error?.name, answer.error?.rolledBack === true));
    });
    const gone = (err: Error): void => {
      this.failed ??= err;
      if (SqliteThread.current === this) SqliteThread.current = undefined;
      for (const waiting of this.pending.values()) waiting.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', gone);
    this.worker.on('exit', (code) => gone(new SqliteWorkerError(`the SQLite worker thread exited (${code})`, 'SQLITE_IOERR_WORKER_EXIT', undefined)));
  }

  send(message: Record<string, unknown>): Promise<Answer> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, ...message });
    });
  }

  async release(): Promise<void> {
    this.users -= 1;
    if (this.users > 0) return;
    if (SqliteThread.current === this) SqliteThread.current = undefined;
    await this.worker.terminate();
  }
}

let nextHandle = 1;

/** One database connection, a handle on the process's SQLite thread. */
export class SqliteWorkerConnection {
  private readonly handle = nextHandle++;
  private closed: Error | undefined;
  /**
   * A transaction's BEGIN not sent yet: it goes with the connection's next message. BEGIN (deferred) takes
   * no lock and cannot fail on a connection outside a transaction, and every transaction's next statement
   * follows at once, so this saves the worker a round trip (two thread wake-ups) per transaction.
   */
  private beginPending = false;

  private constructor(private readonly thread: SqliteThread) {}

  /** A connection with the database open and the given pragmas set (journal_mode = WAL, synchronous...). */
  static async open(filename: string, pragmas: readonly string[], busyTimeoutMs = 5000): Promise<SqliteWorkerConnection> {
    const connection = new SqliteWorkerConnection(SqliteThread.acquire());
    try {
      await connection.thread.send({ handle: connection.handle, open: { filename, pragmas, busyTimeoutMs } });
    } catch (err) {
      connection.closed = err as Error;
      await connection.thread.release();
      throw err;
    }
    return connection;
  }

  /** Runs one statement: its rows when it reads, its changes and last row id otherwise. */
  query(sql: string, bindings: readonly unknown[]): Promise<Answer> {
    if (this.closed) return Promise.reject(this.closed);
    if (sql === BEGIN) {
      if (!this.beginPending) {
        this.beginPending = true;
        return Promise.resolve(BEGUN);
      }
    }
    return this.thread.send({ handle: this.handle, sql, bindings, ...this.takeBegin() });
  }

  /**
   * Runs statements in order in one message to the worker (one round trip instead of one each): what each
   * gave, in order. The first that fails ends the run with its error (the ones before it stay done, as
   * when sent one by one: inside a transaction its ROLLBACK undoes them).
   */
  async queryAll(statements: readonly Statement[]): Promise<StatementResult[]> {
    if (this.closed) throw this.closed;
    if (statements.length === 0) return [];
    const answer = await this.thread.send({ handle: this.handle, statements, ...this.takeBegin() });
    return answer.results ?? [];
  }

  /**
   * Runs statements as one transaction in one message: BEGIN IMMEDIATE, the statements in order, COMMIT
   * (answered once SQLite has made it durable). A failure rejects with a SqliteWorkerError whose
   * `rolledBack` is true when the transaction was rolled back (all but a failure of the thread itself).
   * Outside a transaction of knex's only (the connection's own BEGIN not pending).
   */
  async transaction(statements: readonly Statement[]): Promise<void> {
    if (this.closed) throw this.closed;
    if (this.beginPending) throw new Error('a transaction is already open on this SQLite connection');
    await this.thread.send({ handle: this.handle, statements, transaction: true });
  }

  private takeBegin(): { begin?: true } {
    if (!this.beginPending) return NO_BEGIN;
    this.beginPending = false;
    return WITH_BEGIN;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = new SqliteWorkerError('the SQLite connection is closed', 'SQLITE_IOERR_CLOSED', undefined);
    this.beginPending = false;
    try {
      if (!this.thread.failed) await this.thread.send({ handle: this.handle, close: true });
    } finally {
      await this.thread.release();
    }
  }
}

/** knex's statement for a transaction's start on SQLite (knex/lib/execution/transaction.js). */
const BEGIN = 'BEGIN;';
const BEGUN: Answer = Object.freeze({ id: 0, ok: true, changes: 0, lastInsertRowid: 0 }) as Answer;
const NO_BEGIN = Object.freeze({});
const WITH_BEGIN = Object.freeze({ begin: true as const });

/** Blobs come back from the worker as Uint8Array (structured clone): the callers read Buffers, as from better-sqlite3. */
function restoreBuffers(rows: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  for (const row of rows) {
    for (const key in row) {
      const value = row[key];
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }
  return rows;
}

type QueryObject = { sql?: string; bindings?: unknown[]; response?: unknown; context?: unknown; options?: unknown };
interface BetterSqliteClient {
  connectionSettings: { filename: string };
  config: { sqlitePragmas?: readonly string[]; sqliteBusyTimeoutMs?: number };
  _formatBindings(bindings: unknown[] | undefined): unknown[];
}

// knex's own better-sqlite3 client: its SQL, its dialect's quirks (DDL, processResponse) are kept; only
// where a connection comes from and how a statement runs on it are replaced.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const BetterSqliteClient = require('knex/lib/dialects/better-sqlite3') as new (config: unknown) => object;

/**
 * knex's better-sqlite3 client with its connection in a worker thread (SqliteWorkerConnection).
 * Given to knex as `client`; `sqlitePragmas` in the knex config are set on each new connection, and a
 * statement that finds the database locked is retried for `sqliteBusyTimeoutMs` (5000) before SQLITE_BUSY.
 */
export class SqliteWorkerClient extends BetterSqliteClient {
  /** The driver is loaded by the worker only: this thread never runs (or loads) better-sqlite3. */
  _driver(): object {
    return {};
  }

  async acquireRawConnection(this: BetterSqliteClient): Promise<SqliteWorkerConnection> {
    return SqliteWorkerConnection.open(this.connectionSettings.filename, this.config.sqlitePragmas ?? [], this.config.sqliteBusyTimeoutMs);
  }

  async destroyRawConnection(connection: SqliteWorkerConnection): Promise<void> {
    await connection.close();
  }

  async _query(this: BetterSqliteClient, connection: SqliteWorkerConnection, obj: QueryObject): Promise<QueryObject> {
    if (!obj.sql) throw new Error('The query is empty');
    if (!connection) throw new Error('No connection provided');
    const answer = await connection.query(obj.sql, this._formatBindings(obj.bindings));
    if (answer.rows) {
      obj.response = restoreBuffers(answer.rows);
      return obj;
    }
    obj.response = { changes: answer.changes, lastInsertRowid: answer.lastInsertRowid };
    obj.context = { lastID: answer.lastInsertRowid, changes: answer.changes };
    return obj;
  }
}

/**
 * Runs statements in order on `db` (knex, or a transaction of it), for writes whose results are not needed (the
 * creation batch's INSERTs, stats' counters). On SQLite
 * (SqliteWorkerClient) they go to the worker in one message, on the transaction's connection when `db` is
 * a transaction: one round trip between the threads instead of one per statement. Elsewhere (MySQL) each
 * runs through knex as `db.raw(sql, bindings)`. The SQL is plain, with `?` placeholders only.
 */
export async function runStatements(db: Knex | Knex.Transaction, statements: readonly Statement[]): Promise<void> {
  if (statements.length === 0) return;
  const client = db.client as unknown as SqliteWorkerClient & BetterSqliteClient & {
    emit(event: 'query', query: object): void;
    acquireConnection(): Promise<SqliteWorkerConnection>;
    releaseConnection(connection: SqliteWorkerConnection): Promise<void>;
  };
  if (!runsOnSqliteThread(db)) {
    for (const statement of statements) await db.raw(statement.sql, statement.bindings as Knex.RawBinding[]);
    return;
  }
  const connection = await client.acquireConnection();
  try {
    const { __knexUid, __knexTxId } = connection as unknown as { __knexUid?: string; __knexTxId?: string };
    const formatted = statements.map((statement) => {
      const bindings = client._formatBindings(statement.bindings as unknown[]);
      // knex's 'query' event, as each statement run through knex gives it (its listeners log and count statements).
      client.emit('query', { __knexUid, __knexTxId, method: 'raw', sql: statement.sql, bindings });
      return { sql: statement.sql, bindings };
    });
    await connection.queryAll(formatted);
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * A transaction of plain statements whose results are not needed (the creation batch), on SQLite through
 * its worker thread: BEGIN IMMEDIATE, the statements and COMMIT go to the worker in one message, where
 * knex's transaction sends BEGIN with the first statements and COMMIT in a second message after their
 * answer. One round trip between the threads, and the file's write lock is held only while the worker runs
 * the message, not across a round trip through this thread (another connection to the file, notes' relay,
 * no longer meets it and waits). `beforeSend` runs on this thread just before the message goes (with no
 * await in between): from then on the COMMIT counts as sent. Durability as knex's COMMIT: answered once
 * SQLite has synced it. A failure rejects with the statement's error; `isRolledBack` tells whether nothing
 * was kept for sure. Only for `knex` itself (not a transaction of it) on SqliteWorkerClient.
 */
export async function commitOnSqliteThread(knex: Knex, statements: readonly Statement[], beforeSend: () => void = () => undefined): Promise<void> {
  if (!runsOnSqliteThread(knex)) throw new Error('commitOnSqliteThread needs a knex on SQLite through its worker thread');
  const client = knex.client as unknown as SqliteWorkerClient & BetterSqliteClient & {
    emit(event: 'query' | 'query-response', ...args: unknown[]): void;
    acquireConnection(): Promise<SqliteWorkerConnection>;
    releaseConnection(connection: SqliteWorkerConnection): Promise<void>;
  };
  const connection = await client.acquireConnection();
  try {
    const { __knexUid } = connection as unknown as { __knexUid?: string };
    const formatted = statements.map((statement) => ({ sql: statement.sql, bindings: client._formatBindings(statement.bindings as unknown[]) }));
    beforeSend();
    // knex's 'query' event for each statement, as a transaction run through knex gives them (its listeners log and count statements).
    for (const statement of [{ sql: 'BEGIN IMMEDIATE', bindings: [] }, ...formatted, { sql: 'COMMIT', bindings: [] }]) {
      client.emit('query', { __knexUid, method: 'raw', sql: statement.sql, bindings: statement.bindings });
    }
    await connection.transaction(formatted);
    client.emit('query-response', undefined, { __knexUid, method: 'raw', sql: 'COMMIT', bindings: [] }, undefined);
  } finally {
    await client.releaseConnection(connection);
  }
}

/** Whether a failure of commitOnSqliteThread left nothing of its transaction (rolled back, for sure). */
export function isRolledBack(err: unknown): boolean {
  return err instanceof SqliteWorkerError && err.rolledBack;
}

/** Whether `db` (knex, or a transaction of it) runs on SQLite through its worker thread (SqliteWorkerClient). */
export function runsOnSqliteThread(db: Knex | Knex.Transaction): boolean {
  return (db.client as unknown) instanceof SqliteWorkerClient;
}

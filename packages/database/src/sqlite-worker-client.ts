import { Worker } from 'node:worker_threads';

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
// A statement that finds the database locked by another connection (notes' relay has its own on the same
// file) is tried again a moment later instead of waiting in SQLite's busy handler: that would hold this
// thread, and with it the statement that is to release the lock (the other connection's COMMIT), until the
// timeout. Each connection has one statement in flight at a time (knex awaits each), so retrying keeps its order.
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
      const statement = prepared(handle, message.sql);
      const bindings = message.bindings.map(asBuffer);
      if (statement.reader) {
        parentPort.postMessage({ id, ok: true, rows: statement.all(bindings) });
      } else {
        const result = statement.run(bindings);
        parentPort.postMessage({ id, ok: true, changes: result.changes, lastInsertRowid: result.lastInsertRowid });
      }
    } catch (err) {
      if (err && err.code === 'SQLITE_BUSY' && Date.now() - startedAt < handle.busyTimeoutMs) {
        setTimeout(execute, 2, message, startedAt);
        return;
      }
      throw err;
    }
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: { message: err && err.message, code: err && err.code, name: err && err.name } });
  }
}
parentPort.on('message', (message) => execute(message, Date.now()));
`;

interface Answer {
  id: number;
  ok: boolean;
  rows?: Array<Record<string, unknown>>;
  changes?: number;
  lastInsertRowid?: number | bigint;
  error?: { message: string; code?: string; name?: string };
}

/** The error better-sqlite3 threw in the worker, rebuilt here with its name, message and code (SQLITE_BUSY...). */
export class SqliteWorkerError extends Error {
  constructor(message: string, readonly code: string | undefined, name: string | undefined) {
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
      else waiting.reject(new SqliteWorkerError(answer.error?.message ?? 'SQLite failed', answer.error?.code, answer.error?.name));
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
    return this.thread.send({ handle: this.handle, sql, bindings });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = new SqliteWorkerError('the SQLite connection is closed', 'SQLITE_IOERR_CLOSED', undefined);
    try {
      if (!this.thread.failed) await this.thread.send({ handle: this.handle, close: true });
    } finally {
      await this.thread.release();
    }
  }
}

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

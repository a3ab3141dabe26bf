import type { Knex } from 'knex';

const UNAVAILABLE_CODES = new Set([
  'ER_UNKNOWN_COM_ERROR', 'ER_CONNECTION_KILLED',
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
    if (isCommitRefusedByNode(current)) return true;
    current = e.cause;
  }
  return false;
}

/**
 * A COMMIT the node refused (1180 ER_ERROR_DURING_COMMIT): on Galera, a node that lost quorum
 * refuses it with "... provider status: Not connected to Primary Component"; the writeset was not
 * replicated, the transaction is rolled back. The database cannot take writes here now: 503. It is
 * not taken as safe to run again (the COMMIT was sent): the caller finds out what was kept, as after
 * a lost connection at COMMIT.
 */
export function isCommitRefusedByNode(err: unknown): boolean {
  const e = err as { code?: string; errno?: number } | undefined;
  return e?.errno === 1180 || e?.code === 'ER_ERROR_DURING_COMMIT';
}

/**
 * A transaction the database chose to abort so that another could go on (InnoDB deadlock, SQLite
 * busy): retry it. Galera reports a certification conflict the same way (1213, "Deadlock found when
 * trying to get lock; try restarting transaction"), on any statement or on COMMIT, and in every case
 * the transaction was rolled back on every node: the COMMIT of a writeset that failed certification
 * is refused by all of them alike.
 */
export function isDeadlock(err: unknown): boolean {
  const e = err as { code?: string; errno?: number } | undefined;
  return e?.code === 'ER_LOCK_DEADLOCK' || e?.errno === 1213 || e?.code === 'SQLITE_BUSY';
}

/**
 * A Galera node that cannot take statements now (1047 ER_UNKNOWN_COM_ERROR, "WSREP has not yet
 * prepared node for application use"): it is joining, or it lost quorum and is not in the primary
 * component. The statement was refused, not run; the writer address moves away from such a node
 * (HAProxy's check), so the next try on a new connection goes to one that is.
 */
export function isNodeNotReady(err: unknown): boolean {
  const e = err as { code?: string; errno?: number } | undefined;
  return e?.errno === 1047 || e?.code === 'ER_UNKNOWN_COM_ERROR';
}

/**
 * The connection went away under a statement (the server died, a proxy ended the session, the
 * network cut it). Inside a transaction before its COMMIT, the server rolls it back when it sees the
 * connection gone (or it died with it): nothing of it is kept. At its COMMIT, nobody can tell.
 */
export function isConnectionLost(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const e = current as { code?: unknown; errno?: unknown; fatal?: unknown; message?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && LOST_CODES.has(e.code)) return true;
    if (e.fatal === true) return true;
    if (typeof e.message === 'string' && /connection (is in closed state|lost)|Can't add new command when connection is in closed state/i.test(e.message)) return true;
    current = e.cause;
  }
  return false;
}

const LOST_CODES = new Set(['PROTOCOL_CONNECTION_LOST', 'ECONNRESET', 'EPIPE', 'ER_SERVER_SHUTDOWN', 'ER_CONNECTION_KILLED']);

/**
 * Aborts the database made with nothing kept, that the next try can get past: deadlocks and Galera
 * certification conflicts, and statements a Galera node refused for want of quorum.
 */
export function isRetryableAbort(err: unknown): boolean {
  return isDeadlock(err) || isNodeNotReady(err);
}

/** Between two tries after a refused statement or a lost connection: long enough for the writer address to move. */
const RETRY_PAUSE_MS = 100;

const REFUSED_CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * No connection could be made at all: the address refused it, did not resolve, or could not be
 * routed (mysql2 marks these `fatal`, like a connection lost mid-transaction). Safe to retry, as
 * nothing was sent, but not worth it within a request: the database is down, or its address
 * points nowhere, for longer than a pause of 100 ms (a moving writer address accepts connections
 * and drops them, which is a lost connection, still retried). Retrying these made every creation
 * during a database outage wait about a second for its 503 (three tries and pauses, one batch after
 * another), against 10 ms for a read.
 */
export function isConnectRefused(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && REFUSED_CONNECT_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs a write again when the database aborted it as a deadlock victim or a certification conflict,
 * or refused it on a node without quorum (isRetryableAbort), up to `attempts` times: a batch of many
 * callers must not fail all of them for a conflict the next try resolves. For one statement (no
 * transaction); a lost connection is not retried here, as the statement may have run.
 */
export async function retryingDeadlocks<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !isRetryableAbort(err)) throw err;
      if (!isDeadlock(err)) await pause(RETRY_PAUSE_MS * attempt);
    }
  }
}

/**
 * Whether a failed transaction is certain to have kept nothing, so that running it again is safe:
 * an abort (isRetryableAbort) before or at its COMMIT, or a connection lost before its COMMIT was
 * sent. A connection lost at the COMMIT is not: the COMMIT may have arrived (the caller must find
 * out what was kept, as notes does for its creations, or leave it to an idempotent redelivery).
 */
export function isSafeToRetryTransaction(err: unknown, commitSent: boolean): boolean {
  if (isDeadlock(err)) return true;
  if (commitSent) return false;
  return isNodeNotReady(err) || isConnectionLost(err);
}

/**
 * knex.transaction(work), run again while its failure is safe to retry (isSafeToRetryTransaction),
 * up to `attempts` times: what a deadlock always got, now also for Galera's certification conflicts,
 * a node that lost quorum, and a connection cut mid-transaction (the writer died or HAProxy moved
 * the writer address). `work` must only touch the database through `trx`, as it may run again.
 * No new try starts after `giveUpAt` (epoch ms), the caller's own deadline.
 */
export async function retryingTransaction<T>(
  knex: Knex, work: (trx: Knex.Transaction) => Promise<T>, attempts = 5, options: { giveUpAt?: number } = {},
): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    let commitSent = false;
    try {
      return await knex.transaction(async (trx) => {
        const result = await work(trx);
        // knex sends COMMIT as soon as this function returns.
        commitSent = true;
        return result;
      });
    } catch (err) {
      if (attempt >= attempts || !isSafeToRetryTransaction(err, commitSent) || isConnectRefused(err)) throw err;
      if (!isDeadlock(err)) await pause(RETRY_PAUSE_MS * attempt);
      // A caller already answered (its deadline passed) must not have its write done behind its back.
      if (options.giveUpAt !== undefined && Date.now() >= options.giveUpAt) throw err;
    }
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

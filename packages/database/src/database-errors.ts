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

/** A transaction the database chose to abort so that another could go on (InnoDB deadlock, SQLite busy): retry it. */
export function isDeadlock(err: unknown): boolean {
  const e = err as { code?: string; errno?: number } | undefined;
  return e?.code === 'ER_LOCK_DEADLOCK' || e?.errno === 1213 || e?.code === 'SQLITE_BUSY';
}

/**
 * Runs a write again when the database aborted it as a deadlock victim, up to `attempts` times: a
 * batch of many callers must not fail all of them for a lock conflict the next try resolves.
 */
export async function retryingDeadlocks<T>(work: () => Promise<T>, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= attempts || !isDeadlock(err)) throw err;
    }
  }
}

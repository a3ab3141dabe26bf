import { AppError, ServiceUnavailableError } from '@vanish/common';
import { isDatabaseUnavailable } from './configure-knex';

/** Runs one database call; "database unreachable" becomes ServiceUnavailableError (503). */
export async function withDatabase<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw translateDatabaseError(err);
  }
}

export function translateDatabaseError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) return new ServiceUnavailableError('Database unavailable', err);
  return err;
}

export function isDeadlock(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ER_LOCK_DEADLOCK' || code === 'SQLITE_BUSY';
}

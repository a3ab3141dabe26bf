import { AppError, DependencyUnavailableError } from '@vanish/common';
import { isDatabaseUnavailable } from './configure-knex';

/** Default bound on one store operation: a stalled database answers 503 instead of hanging. */
export const DEFAULT_OPERATION_TIMEOUT_MS = 3_000;

/**
 * Runs one database call; "database unreachable" becomes DependencyUnavailableError (503), and so
 * does a call that has not answered within `timeoutMs` (a stalled connection). A call that times
 * out may still complete later: like any lost commit acknowledgement, the client cannot tell.
 */
export async function withDatabase<T>(call: () => Promise<T>, timeoutMs?: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const operation = call();
    if (!timeoutMs) return await operation;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DependencyUnavailableError('database', 'Database did not answer in time')), timeoutMs);
    });
    return await Promise.race([operation, deadline]);
  } catch (err) {
    throw translateDatabaseError(err);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

export function translateDatabaseError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (isDatabaseUnavailable(err)) return new DependencyUnavailableError('database', 'Database unavailable', err);
  return err;
}

/** Default wait for the answer to a creation batch's COMMIT once it is sent (see KnexNoteStore.insertNew). */
export const DEFAULT_COMMIT_OUTCOME_TIMEOUT_MS = 5_000;

export interface KnexStoreOptions {
  /** Bound on each operation (a whole transaction counts as one); default 3 s. 0 disables. */
  operationTimeoutMs?: number;
  /**
   * Creations only: how long to wait for the answer to a COMMIT already sent before asking the
   * database what it kept; default 5 s.
   */
  commitOutcomeTimeoutMs?: number;
}

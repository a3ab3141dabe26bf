import type { ConsumeOptions } from '@vanish/common';

export const DEFAULT_PREFETCH = 10;
export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 5_000, 30_000];

export type DeliveryOutcome =
  | { kind: 'ack' }
  | { kind: 'retry'; delayMs: number }
  | { kind: 'dead-letter'; reason: 'permanent' | 'max-attempts' | 'malformed'; error: string };

/** Checked by name too, so an error class from another copy of @vanish/common still counts. */
function isNamed(err: unknown, name: string): err is Error {
  return err instanceof Error && err.name === name;
}

/**
 * What happens to a delivery after its handler ran, the same for every bus implementation:
 * success acks; PermanentMessageFailure dead-letters at once; any other failure is retried
 * after a broker-held delay (RetryMessageLater may name the delay) until maxAttempts deliveries
 * have failed, then the message is dead-lettered.
 */
export function decideOutcome(err: unknown, attempt: number, options: ConsumeOptions): DeliveryOutcome {
  if (err === undefined) return { kind: 'ack' };
  const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  if (isNamed(err, 'PermanentMessageFailure')) return { kind: 'dead-letter', reason: 'permanent', error };
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  if (attempt >= maxAttempts) return { kind: 'dead-letter', reason: 'max-attempts', error };
  const delays = options.retryDelaysMs && options.retryDelaysMs.length > 0 ? options.retryDelaysMs : DEFAULT_RETRY_DELAYS_MS;
  const named = isNamed(err, 'RetryMessageLater') ? (err as Error & { delayMs?: number }).delayMs : undefined;
  const delayMs = named ?? delays[Math.min(attempt - 1, delays.length - 1)];
  return { kind: 'retry', delayMs: Math.max(0, Math.round(delayMs)) };
}

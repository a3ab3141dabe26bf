/**
 * Backoff with jitter (DECISIONS 11). The broker holds each delay in a queue per delay value, so
 * the jitter takes one of four fixed factors rather than any value: retries of a burst spread over
 * ±15 % while the broker keeps at most four retry queues per step.
 */
export const JITTER_FACTORS: readonly number[] = [0.85, 0.95, 1.05, 1.15];

export function retryDelayMs(delays: readonly number[], attempt: number, random: () => number = Math.random): number {
  const base = delays[Math.min(Math.max(attempt, 1) - 1, delays.length - 1)]!;
  const factor = JITTER_FACTORS[Math.min(JITTER_FACTORS.length - 1, Math.floor(random() * JITTER_FACTORS.length))]!;
  return Math.max(1, Math.round(base * factor));
}

/** Attempts in all: the first plus one per delay; after the last the event is dead-lettered. */
export function maxAttempts(delays: readonly number[]): number {
  return delays.length + 1;
}

export interface RetrySettings {
  initialDelayMs: number;
  maxDelayMs: number;
  /** No try is scheduled later than this after the first one; then the message is dead-lettered. */
  horizonMs: number;
}

/**
 * Exponential backoff with jitter: the n-th retry waits 1/2, 3/4 or all of
 * min(max, initial * 2^(n-1)) ("equal jitter" in three steps), so commands failing in the same
 * outage spread out. The steps are few on purpose: the broker holds each distinct delay in its own
 * TTL queue (`<queue>.retry.<ms>`), so the set of delays must stay small (3 per doubling).
 */
export class RetryPolicy {
  constructor(private readonly settings: RetrySettings, private readonly random: () => number = Math.random) {}

  /** The delay before the next try, or undefined when it would fall past the horizon. */
  nextDelay(attemptsSoFar: number, firstAttemptAt: Date, now: Date): number | undefined {
    const exponent = Math.min(Math.max(attemptsSoFar - 1, 0), 40);
    const ceiling = Math.min(this.settings.maxDelayMs, this.settings.initialDelayMs * 2 ** exponent);
    const step = Math.min(2, Math.floor(this.random() * 3));
    const delay = Math.round((ceiling * (2 + step)) / 4);
    const elapsed = now.getTime() - firstAttemptAt.getTime();
    if (elapsed + delay > this.settings.horizonMs) return undefined;
    return Math.max(1, delay);
  }
}

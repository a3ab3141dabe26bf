import pLimit from 'p-limit';
import { ServiceUnavailableError } from '@vanish/common';

export interface ScryptLimitOptions {
  /** Derivations running at once (SCRYPT_MAX_CONCURRENT). */
  maxConcurrent: number;
  /** Derivations waiting for a slot; one more answers 503 (SCRYPT_MAX_QUEUED). */
  maxQueued: number;
}

/**
 * Two derivations at once: each holds a libuv pool thread (the pool has four, first come first
 * served) and a core for about 100-200 ms with 32 MiB (note-crypto.ts). Uncapped, a burst of passcode guesses queues ahead
 * of every other pool job of the process (DNS lookups for new database connections, file system)
 * and keeps both cores busy; capped, two threads stay free and the event loop, which serves the
 * notes without a passcode, keeps a core. 32 waiting are 16 rounds of two: about two to three seconds of work.
 */
export const DEFAULT_SCRYPT_LIMIT: Readonly<ScryptLimitOptions> = Object.freeze({ maxConcurrent: 2, maxQueued: 32 });

/**
 * Caps the passcode KDF work of one process (issue: passcode guesses must not starve reveals):
 * at most `maxConcurrent` derivations run, up to `maxQueued` wait in arrival order, and a
 * derivation beyond that is refused at once with 503 (Retry-After) instead of waiting behind them.
 */
export class ScryptLimit {
  private readonly limit: pLimit.Limit;
  private readonly capacity: number;
  /** Derivations accepted and not finished: running or waiting. */
  private admitted = 0;

  constructor(options: ScryptLimitOptions = DEFAULT_SCRYPT_LIMIT) {
    if (!Number.isInteger(options.maxConcurrent) || options.maxConcurrent < 1) throw new Error('maxConcurrent must be a positive integer');
    if (!Number.isInteger(options.maxQueued) || options.maxQueued < 0) throw new Error('maxQueued must be a non-negative integer');
    this.limit = pLimit(options.maxConcurrent);
    this.capacity = options.maxConcurrent + options.maxQueued;
  }

  async run<T>(derive: () => Promise<T>): Promise<T> {
    if (this.admitted >= this.capacity) {
      throw new ServiceUnavailableError('Too many passcode checks at once; retry shortly', undefined, 1);
    }
    this.admitted += 1;
    try {
      return await this.limit(derive);
    } finally {
      this.admitted -= 1;
    }
  }

  /** Derivations running now. */
  get running(): number {
    return this.limit.activeCount;
  }

  /** Derivations accepted and waiting for a slot. */
  get queued(): number {
    return this.admitted - this.limit.activeCount;
  }
}

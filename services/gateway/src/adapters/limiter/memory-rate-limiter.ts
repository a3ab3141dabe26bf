import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { decide, LIMITED_ACTIONS, type LimitDecision, type LimitedAction, type LimitPolicy } from '../../domain/limit-policy';
import type { RateLimiter } from '../../domain/rate-limiter';

export function createMemoryLimiters(policy: LimitPolicy, keyPrefix: string): Record<LimitedAction, RateLimiterMemory> {
  const entries = LIMITED_ACTIONS.map((action) => [
    action,
    new RateLimiterMemory({ points: policy.limits[action], duration: policy.windowSeconds, keyPrefix: `${keyPrefix}:${action}` }),
  ]);
  return Object.fromEntries(entries) as Record<LimitedAction, RateLimiterMemory>;
}

/** Consumes one point; a rejection (RateLimiterRes thrown) is a decision, not an error. */
export async function consumeOne(
  limiter: { consume(key: string, points?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> },
  limit: number,
  key: string,
  fromFallback: boolean,
  options: { [key: string]: unknown } = {},
): Promise<LimitDecision> {
  try {
    const res = await limiter.consume(key, 1, options);
    return decide(limit, res.consumedPoints, res.msBeforeNext, fromFallback);
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      // An in-memory block reports 0 consumed: it is over the limit all the same.
      return decide(limit, Math.max(err.consumedPoints, limit + 1), err.msBeforeNext, fromFallback);
    }
    throw err;
  }
}

/**
 * Per-process fixed windows: the embedded default when REDIS_URL is unset (refused in
 * production, where several gateway replicas would each grant the full limit).
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly limiters: Record<LimitedAction, RateLimiterMemory>;

  constructor(private readonly policy: LimitPolicy, keyPrefix = 'vanish:rl') {
    this.limiters = createMemoryLimiters(policy, keyPrefix);
  }

  consume(action: LimitedAction, clientKey: string): Promise<LimitDecision> {
    return consumeOne(this.limiters[action], this.policy.limits[action], clientKey, false);
  }

  isStoreHealthy(): boolean {
    return true;
  }

  async stop(): Promise<void> {}
}

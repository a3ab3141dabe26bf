import type { Cluster, Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { DependencyState, type Logger } from '@vanish/common';
import { LIMITED_ACTIONS, type LimitDecision, type LimitedAction, type LimitPolicy } from '../../domain/limit-policy';
import type { RateLimiter } from '../../domain/rate-limiter';
import { consumeOne } from './memory-rate-limiter';

const FALLBACK_MARKER = 'vanishFallbackMarker';

/**
 * The insurance limiter: rate-limiter-flexible calls it whenever Redis fails (refused, not
 * ready, command timeout). It reports each use, so the adapter can count the fallback and stop
 * asking a sick Redis for a while.
 */
class InsuranceLimiter extends RateLimiterMemory {
  constructor(opts: ConstructorParameters<typeof RateLimiterMemory>[0], private readonly onUse: () => void) {
    super(opts);
  }
  override consume(key: string | number, pointsToConsume?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    // rate-limiter-flexible hands the caller's options through to the insurance limiter, so the
    // caller learns that this very request was answered from memory.
    const marker = options?.[FALLBACK_MARKER] as { used: boolean } | undefined;
    if (marker) marker.used = true;
    this.onUse();
    return super.consume(key, pointsToConsume, options);
  }

  /** Used while Redis rests: the same counts, without reporting a new Redis failure. */
  consumeWhileResting(key: string, pointsToConsume?: number, options?: { [key: string]: unknown }): Promise<RateLimiterRes> {
    return super.consume(key, pointsToConsume, options);
  }
}

export interface RedisRateLimiterOptions {
  /**
   * An ioredis client (one Redis, Sentinel or Cluster) made with enableOfflineQueue false and a short
   * commandTimeout (see compose). Every limiter operation touches one key, so one Cluster slot.
   */
  redis: Redis | Cluster;
  policy: LimitPolicy;
  keyPrefix: string;
  /** After a Redis failure, answer from memory for this long before asking Redis again. */
  retryIntervalMs: number;
  logger: Logger;
  /** Called once per answer given from memory because Redis failed or is resting. */
  onFallback?: (action: LimitedAction) => void;
  now?: () => number;
}

/**
 * Fixed windows shared by every gateway replica through Redis (rate-limiter-flexible's atomic
 * SET NX EX + INCRBY script: the expiry is set only when the window opens, so a rejected request
 * never extends it). When Redis is unreachable or stalls, the insurance memory limiter answers
 * within the command timeout, and a short circuit breaker answers from memory straight away for
 * retryIntervalMs, so a stalled Redis costs one timeout per interval, not one per request.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly shared: Record<LimitedAction, RateLimiterRedis>;
  private readonly memory: Record<LimitedAction, InsuranceLimiter>;
  private restingUntil = 0;
  private readonly now: () => number;
  /**
   * Redis's outage as one event in the log: one warn when limits fall back to memory (no request
   * fails, so not an error), a summary of the decisions answered from memory at most every 5 s,
   * one info when Redis answers again. Each decision from memory is counted by onFallback.
   */
  private readonly redisState: DependencyState;

  constructor(private readonly options: RedisRateLimiterOptions) {
    this.now = options.now ?? Date.now;
    this.redisState = new DependencyState({
      dependency: 'redis', logger: options.logger, now: this.now, downLevel: 'warn', counting: 'limit decisions answered from memory',
    });
    const { policy, keyPrefix, redis } = options;
    const memory: Partial<Record<LimitedAction, InsuranceLimiter>> = {};
    const shared: Partial<Record<LimitedAction, RateLimiterRedis>> = {};
    for (const action of LIMITED_ACTIONS) {
      const base = { points: policy.limits[action], duration: policy.windowSeconds, keyPrefix: `${keyPrefix}:${action}` };
      memory[action] = new InsuranceLimiter(base, () => this.onRedisFailure());
      shared[action] = new RateLimiterRedis({
        ...base,
        storeClient: redis,
        rejectIfRedisNotReady: true,
        insuranceLimiter: memory[action],
        // Once a key is over its limit, this replica rejects it from memory until the window
        // ends, without asking Redis again (abusers cost nothing).
        inMemoryBlockOnConsumed: policy.limits[action] + 1,
      });
    }
    this.memory = memory as Record<LimitedAction, InsuranceLimiter>;
    this.shared = shared as Record<LimitedAction, RateLimiterRedis>;
  }

  async consume(action: LimitedAction, clientKey: string): Promise<LimitDecision> {
    const limit = this.options.policy.limits[action];
    if (this.now() < this.restingUntil) {
      this.options.onFallback?.(action);
      this.redisState.failed({ action });
      const memory = this.memory[action];
      return consumeOne({ consume: (key, points, opts) => memory.consumeWhileResting(key, points, opts) }, limit, clientKey, true);
    }
    const marker = { used: false };
    const decision = await consumeOne(this.shared[action], limit, clientKey, false, { [FALLBACK_MARKER]: marker });
    if (marker.used) {
      this.options.onFallback?.(action);
      return { ...decision, fromFallback: true };
    }
    this.redisState.answered();
    return decision;
  }

  private onRedisFailure(): void {
    this.restingUntil = this.now() + this.options.retryIntervalMs;
    this.redisState.failed({ fallback: 'rate limits from this process\'s memory', retryIntervalMs: this.options.retryIntervalMs });
  }

  isStoreHealthy(): boolean {
    return this.options.redis.status === 'ready' && !this.redisState.isDown;
  }

  async stop(): Promise<void> {
    // The client belongs to compose, which quits it.
  }
}

import type { Cluster, Redis } from 'ioredis';
import type { RateLimiterMemory } from 'rate-limiter-flexible';
import { DependencyState, type Logger } from '@vanish/common';
import { decide, LIMITED_ACTIONS, type LimitDecision, type LimitedAction, type LimitPolicy } from '../../domain/limit-policy';
import type { RateLimiter } from '../../domain/rate-limiter';
import { consumeOne, createMemoryLimiters } from './memory-rate-limiter';

/**
 * One window's count: the key is created at 0 with the window's expiry only if it does not exist (so
 * the expiry is set once, when the window opens, and a rejected request never extends it), then
 * incremented; the reply is the count and the milliseconds left. Word for word the script of
 * rate-limiter-flexible's RateLimiterRedis, which this adapter used until issue 35: replicas of either
 * version share the same keys and windows during a rolling deploy.
 */
const CONSUME_SCRIPT = `redis.call('set', KEYS[1], 0, 'EX', ARGV[2], 'NX') \
local consumed = redis.call('incrby', KEYS[1], ARGV[1]) \
local ttl = redis.call('pttl', KEYS[1]) \
if ttl == -1 then \
  redis.call('expire', KEYS[1], ARGV[2]) \
  ttl = 1000 * ARGV[2] \
end \
return {consumed, ttl} \
`;

/** The script as a command of the client (ioredis's defineCommand: EVALSHA, EVAL when Redis lacks it). */
interface ConsumeCommand {
  vanishLimitConsume(key: string, points: string, windowSeconds: string): Promise<[number, number]>;
}

/** Abusers past their limit, answered from memory until their window ends (at most this many kept before a sweep). */
const MAX_BLOCKED_BEFORE_SWEEP = 1000;

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
 * Fixed windows shared by every gateway replica through Redis (CONSUME_SCRIPT, one call per decision).
 * When Redis is unreachable, not ready or stalls past the command timeout, this replica's memory
 * limiter answers, and a short circuit breaker answers from memory straight away for retryIntervalMs,
 * so a stalled Redis costs one timeout per interval, not one per request. A key over its limit is
 * refused from memory until its window ends, without asking Redis again (abusers cost nothing).
 *
 * Until issue 35 the script went through rate-limiter-flexible's RateLimiterRedis with its memory
 * limiter as insurance: about ten promises and their closures per decision, the largest part of the
 * limit's JavaScript in the gateway's profile. The behaviour is the same, pinned by the contract suite
 * (test/contract/rate-limiter.contract.ts) and the Redis fault and outage tests.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly memory: Record<LimitedAction, RateLimiterMemory>;
  private readonly redis: (Redis | Cluster) & ConsumeCommand;
  private readonly keyPrefixes: Record<LimitedAction, string>;
  private readonly windowSeconds: string;
  /** Redis keys over their limit, with the time their window ends (Date.now's, as Redis's TTL runs in real time). */
  private readonly blocked = new Map<string, number>();
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
    this.memory = createMemoryLimiters(policy, keyPrefix);
    this.keyPrefixes = Object.fromEntries(LIMITED_ACTIONS.map((action) => [action, `${keyPrefix}:${action}:`])) as Record<LimitedAction, string>;
    this.windowSeconds = String(policy.windowSeconds);
    redis.defineCommand('vanishLimitConsume', { numberOfKeys: 1, lua: CONSUME_SCRIPT });
    this.redis = redis as (Redis | Cluster) & ConsumeCommand;
  }

  async consume(action: LimitedAction, clientKey: string): Promise<LimitDecision> {
    const limit = this.options.policy.limits[action];
    if (this.now() < this.restingUntil) {
      this.options.onFallback?.(action);
      this.redisState.failed({ action });
      return consumeOne(this.memory[action], limit, clientKey, true);
    }
    const key = this.keyPrefixes[action] + clientKey;
    const blockedFor = this.msBlocked(key);
    if (blockedFor > 0) {
      this.redisState.answered();
      return decide(limit, limit + 1, blockedFor);
    }
    let consumed: number;
    let msLeft: number;
    try {
      if (this.redis.status !== 'ready') throw new Error('Redis connection is not ready');
      [consumed, msLeft] = await this.redis.vanishLimitConsume(key, '1', this.windowSeconds);
    } catch {
      this.onRedisFailure();
      this.options.onFallback?.(action);
      return consumeOne(this.memory[action], limit, clientKey, true);
    }
    if (consumed > limit) this.block(key, msLeft);
    this.redisState.answered();
    return decide(limit, consumed, msLeft);
  }

  private msBlocked(key: string): number {
    const until = this.blocked.get(key);
    if (until === undefined) return 0;
    const left = until - Date.now();
    if (left >= 0) return left;
    this.blocked.delete(key);
    return 0;
  }

  private block(key: string, ms: number): void {
    const now = Date.now();
    this.blocked.set(key, now + ms);
    if (this.blocked.size < MAX_BLOCKED_BEFORE_SWEEP) return;
    for (const [blockedKey, until] of this.blocked) if (until <= now) this.blocked.delete(blockedKey);
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

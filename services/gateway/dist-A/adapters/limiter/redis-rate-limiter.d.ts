import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '@vanish/common';
import { type LimitDecision, type LimitedAction, type LimitPolicy } from '../../domain/limit-policy';
import type { RateLimiter } from '../../domain/rate-limiter';
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
export declare class RedisRateLimiter implements RateLimiter {
    private readonly options;
    private readonly shared;
    private readonly memory;
    private restingUntil;
    private failing;
    private readonly now;
    constructor(options: RedisRateLimiterOptions);
    consume(action: LimitedAction, clientKey: string): Promise<LimitDecision>;
    private onRedisFailure;
    isStoreHealthy(): boolean;
    stop(): Promise<void>;
}

import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { type LimitDecision, type LimitedAction, type LimitPolicy } from '../../domain/limit-policy';
import type { RateLimiter } from '../../domain/rate-limiter';
export declare function createMemoryLimiters(policy: LimitPolicy, keyPrefix: string): Record<LimitedAction, RateLimiterMemory>;
/** Consumes one point; a rejection (RateLimiterRes thrown) is a decision, not an error. */
export declare function consumeOne(limiter: {
    consume(key: string, points?: number, options?: {
        [key: string]: unknown;
    }): Promise<RateLimiterRes>;
}, limit: number, key: string, fromFallback: boolean, options?: {
    [key: string]: unknown;
}): Promise<LimitDecision>;
/**
 * Per-process fixed windows: the embedded default when REDIS_URL is unset (refused in
 * production, where several gateway replicas would each grant the full limit).
 */
export declare class MemoryRateLimiter implements RateLimiter {
    private readonly policy;
    private readonly limiters;
    constructor(policy: LimitPolicy, keyPrefix?: string);
    consume(action: LimitedAction, clientKey: string): Promise<LimitDecision>;
    isStoreHealthy(): boolean;
    stop(): Promise<void>;
}

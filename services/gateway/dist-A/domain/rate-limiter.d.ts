import type { LimitDecision, LimitedAction } from './limit-policy';
/**
 * The port every limiter implements (memory for a laptop, Redis with a memory insurance limiter
 * for anything shared). consume() counts one request and never throws for a store outage: an
 * outage degrades to per-process limits, never to an open door or an error page.
 */
export interface RateLimiter {
    consume(action: LimitedAction, clientKey: string): Promise<LimitDecision>;
    /** True while the shared store answers (always true for a memory-only limiter). */
    isStoreHealthy(): boolean;
    stop(): Promise<void>;
}

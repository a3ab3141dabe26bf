/** The three limited actions of SPEC 8 / DECISIONS 5. */
export declare const LIMITED_ACTIONS: readonly ["create", "view", "stats"];
export type LimitedAction = (typeof LIMITED_ACTIONS)[number];
/** Fixed windows: every action counts per client key in windows of the same length. */
export interface LimitPolicy {
    limits: Readonly<Record<LimitedAction, number>>;
    windowSeconds: number;
}
export declare const DEFAULT_LIMIT_POLICY: LimitPolicy;
/** What the limiter decided for one request. */
export interface LimitDecision {
    allowed: boolean;
    limit: number;
    /** Requests left in the current window after this one (never negative). */
    remaining: number;
    /** Whole seconds until the window resets (at least 1). */
    resetSeconds: number;
    /** True when the answer came from the per-process memory limiter instead of the shared store. */
    fromFallback: boolean;
}
/**
 * Builds a decision from a store's count. `consumed` includes this request; a request over the
 * limit is rejected, and since windows are fixed (the expiry is set once, when the window opens),
 * a rejected request never extends the window.
 */
export declare function decide(limit: number, consumed: number, msBeforeReset: number, fromFallback?: boolean): LimitDecision;
/** The headers DECISIONS 5 puts on every limited answer, plus Retry-After on a 429. */
export declare function rateLimitHeaders(decision: LimitDecision): Record<string, string>;

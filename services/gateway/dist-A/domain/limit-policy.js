"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.DEFAULT_LIMIT_POLICY = exports.LIMITED_ACTIONS = void 0;
exports.decide = decide;
exports.rateLimitHeaders = rateLimitHeaders;
/** The three limited actions of SPEC 8 / DECISIONS 5. */
exports.LIMITED_ACTIONS = ['create', 'view', 'stats'];
exports.DEFAULT_LIMIT_POLICY = {
    limits: { create: 10, view: 50, stats: 20 },
    windowSeconds: 3600,
};
/**
 * Builds a decision from a store's count. `consumed` includes this request; a request over the
 * limit is rejected, and since windows are fixed (the expiry is set once, when the window opens),
 * a rejected request never extends the window.
 */
function decide(limit, consumed, msBeforeReset, fromFallback = false) {
    return {
        allowed: consumed <= limit,
        limit,
        remaining: Math.max(0, limit - consumed),
        resetSeconds: Math.max(1, Math.ceil(msBeforeReset / 1000)),
        fromFallback,
    };
}
/** The headers DECISIONS 5 puts on every limited answer, plus Retry-After on a 429. */
function rateLimitHeaders(decision) {
    const headers = {
        'RateLimit-Limit': String(decision.limit),
        'RateLimit-Remaining': String(decision.remaining),
        'RateLimit-Reset': String(decision.resetSeconds),
    };
    if (!decision.allowed)
        headers['Retry-After'] = String(decision.resetSeconds);
    return headers;
}
//# sourceMappingURL=limit-policy.js.map
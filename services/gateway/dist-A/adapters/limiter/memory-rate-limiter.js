"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.MemoryRateLimiter = void 0;
exports.createMemoryLimiters = createMemoryLimiters;
exports.consumeOne = consumeOne;
const rate_limiter_flexible_1 = require("rate-limiter-flexible");
const limit_policy_1 = require("../../domain/limit-policy");
function createMemoryLimiters(policy, keyPrefix) {
    const entries = limit_policy_1.LIMITED_ACTIONS.map((action) => [
        action,
        new rate_limiter_flexible_1.RateLimiterMemory({ points: policy.limits[action], duration: policy.windowSeconds, keyPrefix: `${keyPrefix}:${action}` }),
    ]);
    return Object.fromEntries(entries);
}
/** Consumes one point; a rejection (RateLimiterRes thrown) is a decision, not an error. */
async function consumeOne(limiter, limit, key, fromFallback, options = {}) {
    try {
        const res = await limiter.consume(key, 1, options);
        return (0, limit_policy_1.decide)(limit, res.consumedPoints, res.msBeforeNext, fromFallback);
    }
    catch (err) {
        if (err instanceof rate_limiter_flexible_1.RateLimiterRes) {
            // An in-memory block reports 0 consumed: it is over the limit all the same.
            return (0, limit_policy_1.decide)(limit, Math.max(err.consumedPoints, limit + 1), err.msBeforeNext, fromFallback);
        }
        throw err;
    }
}
/**
 * Per-process fixed windows: the embedded default when REDIS_URL is unset (refused in
 * production, where several gateway replicas would each grant the full limit).
 */
class MemoryRateLimiter {
    policy;
    limiters;
    constructor(policy, keyPrefix = 'vanish:rl') {
        this.policy = policy;
        this.limiters = createMemoryLimiters(policy, keyPrefix);
    }
    consume(action, clientKey) {
        return consumeOne(this.limiters[action], this.policy.limits[action], clientKey, false);
    }
    isStoreHealthy() {
        return true;
    }
    async stop() { }
}
exports.MemoryRateLimiter = MemoryRateLimiter;
//# sourceMappingURL=memory-rate-limiter.js.map
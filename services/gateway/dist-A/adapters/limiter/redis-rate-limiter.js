"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RedisRateLimiter = void 0;
const rate_limiter_flexible_1 = require("rate-limiter-flexible");
const limit_policy_1 = require("../../domain/limit-policy");
const memory_rate_limiter_1 = require("./memory-rate-limiter");
const FALLBACK_MARKER = 'vanishFallbackMarker';
/**
 * The insurance limiter: rate-limiter-flexible calls it whenever Redis fails (refused, not
 * ready, command timeout). It reports each use, so the adapter can count the fallback and stop
 * asking a sick Redis for a while.
 */
class InsuranceLimiter extends rate_limiter_flexible_1.RateLimiterMemory {
    onUse;
    constructor(opts, onUse) {
        super(opts);
        this.onUse = onUse;
    }
    consume(key, pointsToConsume, options) {
        // rate-limiter-flexible hands the caller's options through to the insurance limiter, so the
        // caller learns that this very request was answered from memory.
        const marker = options?.[FALLBACK_MARKER];
        if (marker)
            marker.used = true;
        this.onUse();
        return super.consume(key, pointsToConsume, options);
    }
    /** Used while Redis rests: the same counts, without reporting a new Redis failure. */
    consumeWhileResting(key, pointsToConsume, options) {
        return super.consume(key, pointsToConsume, options);
    }
}
/**
 * Fixed windows shared by every gateway replica through Redis (rate-limiter-flexible's atomic
 * SET NX EX + INCRBY script: the expiry is set only when the window opens, so a rejected request
 * never extends it). When Redis is unreachable or stalls, the insurance memory limiter answers
 * within the command timeout, and a short circuit breaker answers from memory straight away for
 * retryIntervalMs, so a stalled Redis costs one timeout per interval, not one per request.
 */
class RedisRateLimiter {
    options;
    shared;
    memory;
    restingUntil = 0;
    failing = false;
    now;
    constructor(options) {
        this.options = options;
        this.now = options.now ?? Date.now;
        const { policy, keyPrefix, redis } = options;
        const memory = {};
        const shared = {};
        for (const action of limit_policy_1.LIMITED_ACTIONS) {
            const base = { points: policy.limits[action], duration: policy.windowSeconds, keyPrefix: `${keyPrefix}:${action}` };
            memory[action] = new InsuranceLimiter(base, () => this.onRedisFailure());
            shared[action] = new rate_limiter_flexible_1.RateLimiterRedis({
                ...base,
                storeClient: redis,
                rejectIfRedisNotReady: true,
                insuranceLimiter: memory[action],
                // Once a key is over its limit, this replica rejects it from memory until the window
                // ends, without asking Redis again (abusers cost nothing).
                inMemoryBlockOnConsumed: policy.limits[action] + 1,
            });
        }
        this.memory = memory;
        this.shared = shared;
    }
    async consume(action, clientKey) {
        const limit = this.options.policy.limits[action];
        if (this.now() < this.restingUntil) {
            this.options.onFallback?.(action);
            const memory = this.memory[action];
            return (0, memory_rate_limiter_1.consumeOne)({ consume: (key, points, opts) => memory.consumeWhileResting(key, points, opts) }, limit, clientKey, true);
        }
        const marker = { used: false };
        const decision = await (0, memory_rate_limiter_1.consumeOne)(this.shared[action], limit, clientKey, false, { [FALLBACK_MARKER]: marker });
        if (marker.used) {
            this.options.onFallback?.(action);
            return { ...decision, fromFallback: true };
        }
        if (this.failing) {
            this.failing = false;
            this.options.logger.info('redis answers again: rate limits are shared again');
        }
        return decision;
    }
    onRedisFailure() {
        this.restingUntil = this.now() + this.options.retryIntervalMs;
        if (!this.failing) {
            this.failing = true;
            this.options.logger.warn('redis unreachable: rate limits fall back to this process\'s memory', {
                retryIntervalMs: this.options.retryIntervalMs,
            });
        }
    }
    isStoreHealthy() {
        return this.options.redis.status === 'ready' && !this.failing;
    }
    async stop() {
        // The client belongs to compose, which quits it.
    }
}
exports.RedisRateLimiter = RedisRateLimiter;
//# sourceMappingURL=redis-rate-limiter.js.map
export { loadGatewayConfig, parseTrustProxy, type GatewayConfig } from './config';
export { createGatewayService, type GatewayOverrides, type GatewayService } from './compose';
export type { RateLimiter } from './domain/rate-limiter';
export { DEFAULT_LIMIT_POLICY, type LimitDecision, type LimitedAction, type LimitPolicy } from './domain/limit-policy';
export { deriveClientKey, normalizeClientAddress } from './domain/client-key';
export { MemoryRateLimiter } from './adapters/limiter/memory-rate-limiter';
export { RedisRateLimiter } from './adapters/limiter/redis-rate-limiter';
export { InProcessDispatcher, type LocalUpstreams } from './http/in-process-dispatcher';

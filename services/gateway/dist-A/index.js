"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RedisRateLimiter = exports.MemoryRateLimiter = exports.normalizeClientAddress = exports.deriveClientKey = exports.DEFAULT_LIMIT_POLICY = exports.createGatewayService = exports.parseTrustProxy = exports.loadGatewayConfig = void 0;
var config_1 = require("./config");
Object.defineProperty(exports, "loadGatewayConfig", { enumerable: true, get: function () { return config_1.loadGatewayConfig; } });
Object.defineProperty(exports, "parseTrustProxy", { enumerable: true, get: function () { return config_1.parseTrustProxy; } });
var compose_1 = require("./compose");
Object.defineProperty(exports, "createGatewayService", { enumerable: true, get: function () { return compose_1.createGatewayService; } });
var limit_policy_1 = require("./domain/limit-policy");
Object.defineProperty(exports, "DEFAULT_LIMIT_POLICY", { enumerable: true, get: function () { return limit_policy_1.DEFAULT_LIMIT_POLICY; } });
var client_key_1 = require("./domain/client-key");
Object.defineProperty(exports, "deriveClientKey", { enumerable: true, get: function () { return client_key_1.deriveClientKey; } });
Object.defineProperty(exports, "normalizeClientAddress", { enumerable: true, get: function () { return client_key_1.normalizeClientAddress; } });
var memory_rate_limiter_1 = require("./adapters/limiter/memory-rate-limiter");
Object.defineProperty(exports, "MemoryRateLimiter", { enumerable: true, get: function () { return memory_rate_limiter_1.MemoryRateLimiter; } });
var redis_rate_limiter_1 = require("./adapters/limiter/redis-rate-limiter");
Object.defineProperty(exports, "RedisRateLimiter", { enumerable: true, get: function () { return redis_rate_limiter_1.RedisRateLimiter; } });
//# sourceMappingURL=index.js.map
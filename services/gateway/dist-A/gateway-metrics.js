"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.createGatewayMetrics = createGatewayMetrics;
const common_1 = require("@vanish/common");
const limit_policy_1 = require("./domain/limit-policy");
/** The gateway's own metrics on the injected registry (the HTTP histogram comes from common). */
function createGatewayMetrics(registry, storeHealthy) {
    const rateLimited = new common_1.Counter({
        name: 'gateway_rate_limited_total',
        help: 'Requests refused with 429, by limited action',
        labelNames: ['action'],
        registers: [registry],
    });
    const limiterFallback = new common_1.Counter({
        name: 'gateway_limiter_fallback_total',
        help: 'Limit decisions answered from process memory because Redis was unreachable or slow',
        labelNames: ['action'],
        registers: [registry],
    });
    for (const action of limit_policy_1.LIMITED_ACTIONS) {
        rateLimited.inc({ action }, 0);
        limiterFallback.inc({ action }, 0);
    }
    new common_1.Gauge({
        name: 'gateway_limiter_store_up',
        help: '1 while the shared limiter store (Redis) answers, 0 while limits come from memory',
        registers: [registry],
        collect() {
            this.set(storeHealthy() ? 1 : 0);
        },
    });
    const upstreamErrors = new common_1.Counter({
        name: 'gateway_upstream_errors_total',
        help: 'Requests the gateway answered 502/504 because an upstream failed',
        labelNames: ['upstream', 'code'],
        registers: [registry],
    });
    const sharedReadJoins = new common_1.Counter({
        name: 'gateway_shared_read_joins_total',
        help: 'GETs answered from an upstream read that another request had asked for (routes whose answer is everyone\'s)',
        labelNames: ['upstream'],
        registers: [registry],
    });
    return { rateLimited, limiterFallback, upstreamErrors, sharedReadJoins };
}
//# sourceMappingURL=gateway-metrics.js.map
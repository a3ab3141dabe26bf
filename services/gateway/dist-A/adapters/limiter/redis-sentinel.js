"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.readRedisSentinel = readRedisSentinel;
exports.sentinelClientOptions = sentinelClientOptions;
const common_1 = require("@vanish/common");
const redis_addresses_1 = require("./redis-addresses");
/**
 * REDIS_SENTINELS + REDIS_SENTINEL_NAME (with REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD, REDIS_SENTINEL_TLS);
 * undefined when REDIS_SENTINELS is unset. Refused together with REDIS_URL (one Redis or the other), and
 * in production without REDIS_SENTINEL_TLS unless REDIS_ALLOW_PLAINTEXT=true.
 */
function readRedisSentinel(reader, redisUrl) {
    const list = reader.str('REDIS_SENTINELS');
    if (list === undefined)
        return undefined;
    if (redisUrl !== undefined)
        reader.problem('REDIS_SENTINELS: set either REDIS_URL (one Redis) or REDIS_SENTINELS (Sentinel), not both');
    const sentinels = (0, redis_addresses_1.readAddressList)(reader, 'REDIS_SENTINELS', list, 'Sentinel');
    const name = reader.str('REDIS_SENTINEL_NAME');
    if (name === undefined)
        reader.problem('REDIS_SENTINEL_NAME: required with REDIS_SENTINELS (the name the Sentinels monitor)');
    const tls = reader.bool('REDIS_SENTINEL_TLS', false);
    (0, common_1.refuseInsecureTransportInProduction)(reader, {
        variable: 'REDIS_SENTINELS',
        risk: tls ? undefined : 'Sentinel and Redis traffic is plaintext without REDIS_SENTINEL_TLS=true',
        optOut: 'REDIS_ALLOW_PLAINTEXT',
    });
    const password = reader.str('REDIS_PASSWORD');
    const sentinelPassword = reader.str('REDIS_SENTINEL_PASSWORD');
    return {
        sentinels, name: name ?? '', tls,
        ...(password !== undefined ? { password } : {}),
        ...(sentinelPassword !== undefined ? { sentinelPassword } : {}),
    };
}
/**
 * ioredis options for Sentinel mode. The Sentinels are asked for the primary on every (re)connect;
 * a node that answers READONLY (a demoted primary still reached through an old connection) makes the
 * client reconnect, and so ask the Sentinels again. No failoverDetector: it was seen to give up for
 * good when the switch notice came during a reconnect, and it gains nothing when the primary dies.
 */
function sentinelClientOptions(settings, tlsCa) {
    const tls = settings.tls ? (tlsCa !== undefined ? { ca: tlsCa } : {}) : undefined;
    return {
        sentinels: settings.sentinels,
        name: settings.name,
        role: 'master',
        ...(settings.password !== undefined ? { password: settings.password } : {}),
        ...(settings.sentinelPassword !== undefined ? { sentinelPassword: settings.sentinelPassword } : {}),
        ...(tls ? { tls, sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
        sentinelRetryStrategy: (times) => Math.min(100 * times, 1000),
        reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 1 : false),
    };
}
//# sourceMappingURL=redis-sentinel.js.map
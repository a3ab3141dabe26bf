"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.redisTlsOptions = redisTlsOptions;
exports.redisTransportRisk = redisTransportRisk;
/**
 * ioredis's `tls` option for a REDIS_URL: for `rediss://` the server is verified (Node's default)
 * against `ca` when given (REDIS_TLS_CA_FILE), else Node's public roots; undefined for `redis://`.
 */
function redisTlsOptions(url, ca) {
    if (!/^rediss:/i.test(url))
        return undefined;
    return ca !== undefined ? { ca } : {};
}
/** Why a path attacker could read or change this Redis traffic, or undefined for rediss://. */
function redisTransportRisk(url) {
    return /^rediss:/i.test(url) ? undefined : 'redis:// is plaintext (use rediss://, with REDIS_TLS_CA_FILE for a private CA)';
}
//# sourceMappingURL=redis-tls.js.map
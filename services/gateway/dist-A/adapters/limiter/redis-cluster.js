"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.readRedisCluster = readRedisCluster;
exports.clusterClientOptions = clusterClientOptions;
const common_1 = require("@vanish/common");
const redis_addresses_1 = require("./redis-addresses");
/**
 * REDIS_CLUSTER_NODES (with REDIS_PASSWORD, REDIS_CLUSTER_TLS); undefined when unset. Refused together
 * with REDIS_URL or REDIS_SENTINELS (one Redis form at a time), and in production without
 * REDIS_CLUSTER_TLS unless REDIS_ALLOW_PLAINTEXT=true, as the other forms are.
 */
function readRedisCluster(reader, otherForms) {
    const list = reader.str('REDIS_CLUSTER_NODES');
    if (list === undefined)
        return undefined;
    if (otherForms.redisUrl !== undefined)
        reader.problem('REDIS_CLUSTER_NODES: set either REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (Redis Cluster), not both');
    if (otherForms.sentinels)
        reader.problem('REDIS_CLUSTER_NODES: set either REDIS_SENTINELS (Sentinel) or REDIS_CLUSTER_NODES (Redis Cluster), not both');
    const nodes = (0, redis_addresses_1.readAddressList)(reader, 'REDIS_CLUSTER_NODES', list, 'cluster node');
    const tls = reader.bool('REDIS_CLUSTER_TLS', false);
    (0, common_1.refuseInsecureTransportInProduction)(reader, {
        variable: 'REDIS_CLUSTER_NODES',
        risk: tls ? undefined : 'Redis Cluster traffic is plaintext without REDIS_CLUSTER_TLS=true',
        optOut: 'REDIS_ALLOW_PLAINTEXT',
    });
    const password = reader.str('REDIS_PASSWORD');
    return { nodes, tls, ...(password !== undefined ? { password } : {}) };
}
/**
 * ioredis Cluster options that keep the limiter's promise of an answer within the command timeout:
 * a command for a slot whose master is gone fails at once (no retry after a closed connection, no
 * wait on CLUSTERDOWN, no offline queue), so the insurance limiter answers it; the slot map is
 * learnt again from the MOVED the surviving nodes answer once a replica was promoted, and every
 * slotsRefreshInterval. Writes and reads go to masters only (the counts must be the latest).
 */
function clusterClientOptions(settings, connection, tlsCa) {
    const { retryStrategy, ...perNode } = connection;
    const tls = settings.tls ? (tlsCa !== undefined ? { ca: tlsCa } : {}) : undefined;
    return {
        scaleReads: 'master',
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        retryDelayOnFailover: 0,
        retryDelayOnClusterDown: 0,
        slotsRefreshTimeout: connection.connectTimeout,
        slotsRefreshInterval: 5000,
        clusterRetryStrategy: retryStrategy,
        redisOptions: {
            ...perNode,
            ...(settings.password !== undefined ? { password: settings.password } : {}),
            ...(tls ? { tls } : {}),
        },
    };
}
//# sourceMappingURL=redis-cluster.js.map
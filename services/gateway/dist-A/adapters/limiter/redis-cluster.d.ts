import { type EnvReader } from '@vanish/common';
import { type RedisAddress } from './redis-addresses';
/** A Redis Cluster: ioredis learns the slot map from any seed node and follows it through failovers. */
export interface RedisClusterSettings {
    /** REDIS_CLUSTER_NODES: `host:port,...`, seed nodes (any live one is enough; list several). */
    nodes: RedisAddress[];
    /** REDIS_PASSWORD(_FILE): the nodes' password (AUTH), if any. */
    password?: string;
    /** REDIS_CLUSTER_TLS=true: TLS to every node (with REDIS_TLS_CA_FILE). */
    tls: boolean;
}
/**
 * REDIS_CLUSTER_NODES (with REDIS_PASSWORD, REDIS_CLUSTER_TLS); undefined when unset. Refused together
 * with REDIS_URL or REDIS_SENTINELS (one Redis form at a time), and in production without
 * REDIS_CLUSTER_TLS unless REDIS_ALLOW_PLAINTEXT=true, as the other forms are.
 */
export declare function readRedisCluster(reader: EnvReader, otherForms: {
    redisUrl: string | undefined;
    sentinels: boolean;
}): RedisClusterSettings | undefined;
/** The per-connection settings compose gives every Redis client of the limiter (see createRedisClient there). */
export interface RedisConnectionOptions {
    commandTimeout: number;
    connectTimeout: number;
    maxRetriesPerRequest: number;
    autoResendUnfulfilledCommands: boolean;
    retryStrategy: (times: number) => number;
}
/**
 * ioredis Cluster options that keep the limiter's promise of an answer within the command timeout:
 * a command for a slot whose master is gone fails at once (no retry after a closed connection, no
 * wait on CLUSTERDOWN, no offline queue), so the insurance limiter answers it; the slot map is
 * learnt again from the MOVED the surviving nodes answer once a replica was promoted, and every
 * slotsRefreshInterval. Writes and reads go to masters only (the counts must be the latest).
 */
export declare function clusterClientOptions(settings: RedisClusterSettings, connection: RedisConnectionOptions, tlsCa: string | Buffer | undefined): Record<string, unknown>;

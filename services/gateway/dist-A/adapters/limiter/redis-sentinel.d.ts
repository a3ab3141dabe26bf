import { type EnvReader } from '@vanish/common';
import { type RedisAddress } from './redis-addresses';
/** Redis behind Sentinels: the Sentinels name the current primary, ioredis follows it. */
export interface RedisSentinelSettings {
    /** REDIS_SENTINELS: `host:port,host:port,...` (three or more in production: a quorum of two). */
    sentinels: RedisAddress[];
    /** REDIS_SENTINEL_NAME: the primary's name in the Sentinels' configuration (`sentinel monitor <name> ...`). */
    name: string;
    /** REDIS_PASSWORD(_FILE): the data nodes' password (AUTH), if any. */
    password?: string;
    /** REDIS_SENTINEL_PASSWORD(_FILE): the Sentinels' own password, if any. */
    sentinelPassword?: string;
    /** REDIS_SENTINEL_TLS=true: TLS to the Sentinels and to the data nodes (with REDIS_TLS_CA_FILE). */
    tls: boolean;
}
/**
 * REDIS_SENTINELS + REDIS_SENTINEL_NAME (with REDIS_PASSWORD, REDIS_SENTINEL_PASSWORD, REDIS_SENTINEL_TLS);
 * undefined when REDIS_SENTINELS is unset. Refused together with REDIS_URL (one Redis or the other), and
 * in production without REDIS_SENTINEL_TLS unless REDIS_ALLOW_PLAINTEXT=true.
 */
export declare function readRedisSentinel(reader: EnvReader, redisUrl: string | undefined): RedisSentinelSettings | undefined;
/**
 * ioredis options for Sentinel mode. The Sentinels are asked for the primary on every (re)connect;
 * a node that answers READONLY (a demoted primary still reached through an old connection) makes the
 * client reconnect, and so ask the Sentinels again. No failoverDetector: it was seen to give up for
 * good when the switch notice came during a reconnect, and it gains nothing when the primary dies.
 */
export declare function sentinelClientOptions(settings: RedisSentinelSettings, tlsCa: string | Buffer | undefined): Record<string, unknown>;

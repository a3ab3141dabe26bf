import type { EnvReader } from '@vanish/common';
export interface RedisAddress {
    host: string;
    port: number;
}
/**
 * A `host:port,host:port,...` list (IPv6 in brackets) from one variable: REDIS_SENTINELS or
 * REDIS_CLUSTER_NODES. Bad entries and an empty list are reported as problems of that variable.
 */
export declare function readAddressList(reader: EnvReader, variable: string, list: string, what: string): RedisAddress[];

/**
 * ioredis's `tls` option for a REDIS_URL: for `rediss://` the server is verified (Node's default)
 * against `ca` when given (REDIS_TLS_CA_FILE), else Node's public roots; undefined for `redis://`.
 */
export declare function redisTlsOptions(url: string, ca: string | Buffer | undefined): {
    ca?: string | Buffer;
} | undefined;
/** Why a path attacker could read or change this Redis traffic, or undefined for rediss://. */
export declare function redisTransportRisk(url: string): string | undefined;

/**
 * ioredis's `tls` option for a REDIS_URL: for `rediss://` the server is verified (Node's default)
 * against `ca` when given (REDIS_TLS_CA_FILE), else Node's public roots; undefined for `redis://`.
 */
export function redisTlsOptions(url: string, ca: string | Buffer | undefined): { ca?: string | Buffer } | undefined {
  if (!/^rediss:/i.test(url)) return undefined;
  return ca !== undefined ? { ca } : {};
}

/** Why a path attacker could read or change this Redis traffic, or undefined for rediss://. */
export function redisTransportRisk(url: string): string | undefined {
  return /^rediss:/i.test(url) ? undefined : 'redis:// is plaintext (use rediss://, with REDIS_TLS_CA_FILE for a private CA)';
}

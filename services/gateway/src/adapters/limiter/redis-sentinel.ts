import type { Redis } from 'ioredis';
import { refuseInsecureTransportInProduction, type EnvReader, type Logger } from '@vanish/common';
import { readAddressList, type RedisAddress } from './redis-addresses';

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
export function readRedisSentinel(reader: EnvReader, redisUrl: string | undefined): RedisSentinelSettings | undefined {
  const list = reader.str('REDIS_SENTINELS');
  if (list === undefined) return undefined;
  if (redisUrl !== undefined) reader.problem('REDIS_SENTINELS: set either REDIS_URL (one Redis) or REDIS_SENTINELS (Sentinel), not both');
  const sentinels = readAddressList(reader, 'REDIS_SENTINELS', list, 'Sentinel');
  const name = reader.str('REDIS_SENTINEL_NAME');
  if (name === undefined) reader.problem('REDIS_SENTINEL_NAME: required with REDIS_SENTINELS (the name the Sentinels monitor)');
  const tls = reader.bool('REDIS_SENTINEL_TLS', false);
  refuseInsecureTransportInProduction(reader, {
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
 * The longest wait between reconnects in Sentinel mode. The client finds the new primary at its first
 * reconnect after the switch; with a 1 s cap that came up to a second late. Measured kill to both
 * gateways on the new primary, down-after 2 s: 2.9 to 4.0 s with 250 ms, 3.5 to 5.2 s with 1 s
 * (docs/scaling.md). Four attempts a second at most while Redis is away cost nothing.
 */
const SENTINEL_RECONNECT_CAP_MS = 250;

/**
 * ioredis options for Sentinel mode. The Sentinels are asked for the primary on every (re)connect;
 * a node that answers READONLY (a demoted primary still reached through an old connection) makes the
 * client reconnect, and so ask the Sentinels again. No failoverDetector: it was seen to give up for
 * good when the switch notice came during a reconnect, and it gains nothing when the primary dies.
 */
export function sentinelClientOptions(settings: RedisSentinelSettings, tlsCa: string | Buffer | undefined): Record<string, unknown> {
  const tls = settings.tls ? (tlsCa !== undefined ? { ca: tlsCa } : {}) : undefined;
  return {
    sentinels: settings.sentinels,
    name: settings.name,
    role: 'master',
    ...(settings.password !== undefined ? { password: settings.password } : {}),
    ...(settings.sentinelPassword !== undefined ? { sentinelPassword: settings.sentinelPassword } : {}),
    ...(tls ? { tls, sentinelTLS: tls, enableTLSForSentinelMode: true } : {}),
    sentinelRetryStrategy: (times: number) => Math.min(100 * times, SENTINEL_RECONNECT_CAP_MS),
    retryStrategy: (times: number) => Math.min(100 * times, SENTINEL_RECONNECT_CAP_MS),
    reconnectOnError: (err: Error) => (err.message.startsWith('READONLY') ? 1 : false),
  };
}

/**
 * A Sentinel switch as what it is: one warn line naming the old and the new primary, written when
 * the client is ready on a primary other than the one it had (the address it is connected to, so
 * a switch that came while the gateway was reconnecting is seen as well as one it was told of).
 */
export function logPrimarySwitches(redis: Redis, logger: Logger): void {
  let primary: string | undefined;
  redis.on('ready', () => {
    const stream = (redis as unknown as { stream?: { remoteAddress?: string; remotePort?: number } }).stream;
    if (stream?.remoteAddress === undefined) return;
    const current = `${stream.remoteAddress}:${stream.remotePort}`;
    if (primary !== undefined && current !== primary) logger.warn('redis primary switched', { oldPrimary: primary, newPrimary: current });
    primary = current;
  });
}

/**
 * ioredis reports "All sentinels are unreachable. Retrying from scratch" whenever its walk through
 * the Sentinel list reaches the end, which also happens when every Sentinel answered but the primary
 * they named refused us (the old primary, during a switch). Only with a "Last error" did a Sentinel
 * itself fail; without one the line says nothing true, and the primary's own error is logged already.
 */
export function isSentinelWalkWithoutSentinelError(err: Error): boolean {
  return err.message.startsWith('All sentinels are unreachable') && !err.message.includes('Last error:');
}

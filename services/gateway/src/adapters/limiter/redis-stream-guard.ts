import type { Cluster, Redis } from 'ioredis';

type Connect = (...args: unknown[]) => Promise<unknown>;

/**
 * ioredis listens for a connection's 'error' with once() (twice: its connector and its client), but
 * a TLS handshake that fails can emit more errors than that, for instance the certificate refusal
 * and then the server's alert. A further 'error' with no listener is thrown by Node's EventEmitter
 * and ends the process (ioredis PR #961, never merged). Every stream the client opens gets a
 * permanent listener that keeps those extra errors: ioredis still sees and reports the first ones.
 * Call it before the client connects (lazyConnect), or its first connection goes unguarded.
 */
/** A Cluster client, told by its flag (a class check would load ioredis in every gateway: it is loaded only for Redis). */
export function isCluster(redis: Redis | Cluster): redis is Cluster {
  return redis.isCluster;
}

export function guardStreamErrors(redis: Redis | Cluster): void {
  if (isCluster(redis)) {
    // A Cluster opens a client per node, each before its first connection ('+node' comes first).
    redis.on('+node', (node: Redis) => guardStreamErrors(node));
    return;
  }
  const connector = (redis as unknown as { connector?: { connect: Connect } }).connector;
  if (!connector || typeof connector.connect !== 'function') {
    throw new Error('ioredis has no connector.connect any more: guardStreamErrors must be revisited');
  }
  const connect = connector.connect.bind(connector);
  connector.connect = async (...args: unknown[]) => {
    const stream = await connect(...args);
    const emitter = stream as { on?: (event: string, listener: (err: Error) => void) => void };
    emitter.on?.('error', ignoreExtraError);
    return stream;
  };
  guardHelperClients(redis, connector as SentinelConnectorLike);
}

type SentinelConnectorLike = { connectToSentinel?: (endpoint: unknown, options?: Record<string, unknown>) => Redis };

/**
 * The clients ioredis opens beside the one we made: a Sentinel connector's own clients to the
 * Sentinels (to find the master, to watch for a failover), and the copies a Cluster makes of a
 * node to read its slots (`duplicate`). Each is guarded before its first connection: a Sentinel
 * client is made lazily, then connected as ioredis would have; a Cluster node's copy inherits the
 * node's lazyConnect and connects at its first command.
 */
function guardHelperClients(redis: Redis, connector: SentinelConnectorLike): void {
  const duplicate = redis.duplicate.bind(redis);
  redis.duplicate = ((...args: Parameters<Redis['duplicate']>) => {
    const copy = duplicate(...args);
    guardStreamErrors(copy);
    return copy;
  }) as Redis['duplicate'];
  if (typeof connector.connectToSentinel !== 'function') return;
  const connectToSentinel = connector.connectToSentinel.bind(connector);
  connector.connectToSentinel = (endpoint, options) => {
    const client = connectToSentinel(endpoint, { ...options, lazyConnect: true });
    guardStreamErrors(client);
    if (options?.lazyConnect !== true) client.connect().catch(() => undefined);
    return client;
  };
}

function ignoreExtraError(): void {
  // ioredis's own listeners report the error; this one only keeps it from being unhandled.
}

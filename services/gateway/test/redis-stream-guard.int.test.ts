import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { guardStreamErrors } from '../src/adapters/limiter/redis-stream-guard';

/**
 * A connection that fails in more ways than one (a TLS handshake refused, then the server's alert)
 * emits 'error' more often than ioredis listens for it (once, by two listeners that both take the first). A local TCP server stands in for Redis: the
 * client only has to open a stream for the test to emit errors on it.
 */
describe('the gateway\'s guard on ioredis streams', () => {
  let server: Server;
  let port: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  async function openedStream(guarded: boolean): Promise<{ redis: Redis; stream: NodeJS.EventEmitter }> {
    const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, enableOfflineQueue: false });
    redis.on('error', () => undefined);
    if (guarded) guardStreamErrors(redis);
    redis.connect().catch(() => undefined);
    for (let i = 0; i < 200 && !(redis as unknown as { stream?: unknown }).stream; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const stream = (redis as unknown as { stream?: NodeJS.EventEmitter }).stream;
    if (!stream) throw new Error('ioredis opened no stream to the local server');
    return { redis, stream };
  }

  async function streamOf(client: Redis): Promise<NodeJS.EventEmitter> {
    for (let i = 0; i < 200 && !(client as unknown as { stream?: unknown }).stream; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const stream = (client as unknown as { stream?: NodeJS.EventEmitter }).stream;
    if (!stream) throw new Error('ioredis opened no stream to the local server');
    return stream;
  }

  function expectThreeErrorsKept(stream: NodeJS.EventEmitter): void {
    expect(() => {
      stream.emit('error', new Error('first'));
      stream.emit('error', new Error('second'));
      stream.emit('error', new Error('third'));
    }).not.toThrow();
  }

  it('when a Sentinel client of the guarded client\'s own (finding the master) emits three errors, then none is thrown', async () => {
    const redis = new Redis({
      sentinels: [{ host: '127.0.0.1', port }], name: 'mymaster', lazyConnect: true, enableOfflineQueue: false,
      retryStrategy: () => null, sentinelRetryStrategy: () => null,
    });
    redis.on('error', () => undefined);
    guardStreamErrors(redis);
    // Seen from outside the guard: the clients the Sentinel connector makes.
    const connector = (redis as unknown as { connector: { connectToSentinel: (...args: unknown[]) => Redis } }).connector;
    const made: Redis[] = [];
    const guarded = connector.connectToSentinel.bind(connector);
    connector.connectToSentinel = (...args: unknown[]) => {
      const client = guarded(...args);
      made.push(client);
      return client;
    };
    redis.connect().catch(() => undefined);
    try {
      for (let i = 0; i < 200 && made.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(made.length).toBeGreaterThan(0);
      expectThreeErrorsKept(await streamOf(made[0]!));
    } finally {
      redis.disconnect();
      for (const client of made) client.disconnect();
    }
  });

  it('when a copy of a guarded client (as a Cluster makes to read a node\'s slots) emits three errors, then none is thrown', async () => {
    const { redis } = await openedStream(true);
    const copy = redis.duplicate();
    copy.on('error', () => undefined);
    copy.connect().catch(() => undefined);
    try {
      expectThreeErrorsKept(await streamOf(copy));
    } finally {
      copy.disconnect();
      redis.disconnect();
    }
  });

  it('when a stream emits a second error, then an unguarded client throws it (why the guard exists)', async () => {
    const { redis, stream } = await openedStream(false);
    try {
      stream.emit('error', new Error('first'));
      expect(() => stream.emit('error', new Error('second'))).toThrow('second');
    } finally {
      redis.disconnect();
    }
  });

  it('when a guarded stream emits three errors, then none is thrown and the client still reports the first', async () => {
    const { redis, stream } = await openedStream(true);
    const reported: string[] = [];
    redis.on('error', (err: Error) => reported.push(err.message));
    try {
      expect(() => {
        stream.emit('error', new Error('first'));
        stream.emit('error', new Error('second'));
        stream.emit('error', new Error('third'));
      }).not.toThrow();
      expect(reported).toContain('first');
    } finally {
      redis.disconnect();
    }
  });
});

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

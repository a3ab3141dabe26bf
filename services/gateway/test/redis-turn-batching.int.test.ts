import { Redis } from 'ioredis';
import { batchWritesPerTurn } from '../src/adapters/limiter/redis-turn-batching';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The gateway's single Redis client sends the commands of one event-loop turn in one write (issue 35). */
describe('Redis commands batched per event-loop turn', () => {
  let redis: Redis;
  const key = `vanish-test:turn-batching:${process.pid}:${Date.now()}`;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL, { enableAutoPipelining: false, enableOfflineQueue: false, lazyConnect: true, maxRetriesPerRequest: 1 });
    batchWritesPerTurn(redis);
    await redis.connect();
  });

  afterAll(async () => {
    await redis.del(key);
    redis.disconnect();
  });

  it('sends the commands of one turn in one write, each answered in order', async () => {
    const writes: number[] = [];
    const stream = redis.stream as unknown as { _writev?: unknown; _write: (...args: unknown[]) => unknown; _writeGeneric: (writev: boolean, data: unknown, ...rest: unknown[]) => unknown };
    const original = stream._writeGeneric.bind(stream);
    stream._writeGeneric = (writev, data, ...rest) => {
      writes.push(writev ? (data as unknown[]).length : 1);
      return original(writev, data, ...rest);
    };
    try {
      const replies = Promise.all([redis.incr(key), redis.incr(key), redis.incrby(key, 5), redis.get(key)]);
      expect(redis.stream.writableCorked).toBe(1);
      expect(writes).toEqual([]);
      await expect(replies).resolves.toEqual([1, 2, 7, '7']);
      expect(writes).toEqual([4]);
      expect(redis.stream.writableCorked).toBe(0);
    } finally {
      stream._writeGeneric = original;
    }
  });

  it('corks each turn anew', async () => {
    await redis.set(key, '0');
    expect(redis.stream.writableCorked).toBe(0);
    const first = redis.incr(key);
    await new Promise((resolve) => setImmediate(resolve));
    expect(redis.stream.writableCorked).toBe(0);
    const second = redis.incr(key);
    expect(redis.stream.writableCorked).toBe(1);
    await expect(Promise.all([first, second])).resolves.toEqual([1, 2]);
  });

  it('leaves a client that is not connected as it was: the command is refused at once', async () => {
    const offline = new Redis(REDIS_URL, { enableAutoPipelining: false, enableOfflineQueue: false, lazyConnect: true });
    batchWritesPerTurn(offline);
    try {
      await expect(offline.get(key)).rejects.toThrow(/enableOfflineQueue/);
    } finally {
      offline.disconnect();
    }
  });
});

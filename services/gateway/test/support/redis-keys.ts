import { Redis } from 'ioredis';

/** Deletes this test's own keys (never FLUSHALL: the machine's Redis is shared). */
export async function deleteKeysWithPrefix(prefix: string): Promise<void> {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export async function readCounter(key: string): Promise<number | null> {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const value = await redis.get(key);
    return value === null ? null : Number(value);
  } finally {
    redis.disconnect();
  }
}

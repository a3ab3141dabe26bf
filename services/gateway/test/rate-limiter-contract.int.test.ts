import { Redis } from 'ioredis';
import { silentLogger } from '@vanish/common';
import { requireService } from '@vanish/testkit/services';
import { MemoryRateLimiter } from '../src/adapters/limiter/memory-rate-limiter';
import { RedisRateLimiter } from '../src/adapters/limiter/redis-rate-limiter';
import { rateLimiterContract } from './contract/rate-limiter.contract';
import { testPrefix } from './support/gateway-harness';
import { deleteKeysWithPrefix } from './support/redis-keys';

describe('MemoryRateLimiter', () => {
  rateLimiterContract(async (policy) => ({ limiter: new MemoryRateLimiter(policy), close: async () => {} }));
});

describe('RedisRateLimiter on the real Redis', () => {
  beforeAll(async () => {
    await requireService('redis');
  });

  rateLimiterContract(async (policy) => {
    const prefix = testPrefix('contract');
    const redis = new Redis('redis://127.0.0.1:6379', { enableOfflineQueue: false, commandTimeout: 500, maxRetriesPerRequest: 1 });
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', () => resolve());
      redis.once('error', reject);
    });
    const limiter = new RedisRateLimiter({ redis, policy, keyPrefix: prefix, retryIntervalMs: 1000, logger: silentLogger });
    return {
      limiter,
      close: async () => {
        await limiter.stop();
        redis.disconnect();
        await deleteKeysWithPrefix(prefix);
      },
    };
  });
});

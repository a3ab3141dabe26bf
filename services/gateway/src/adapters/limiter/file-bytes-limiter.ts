import type { Cluster, Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { decide, type LimitDecision } from '../../domain/limit-policy';

/**
 * FILE_BYTES_PER_HOUR (DECISIONS 14): upload bytes per client key in fixed one-hour windows, in Redis
 * like the other limits (rate-limiter-flexible, a memory insurance limiter when Redis fails), or in
 * memory alone (the all-in-one, a laptop).
 *
 * A PATCH reserves its Content-Length before a byte is relayed: a reservation that would pass the
 * limit is refused whole and given back, so a 429 stores nothing and costs the client nothing. What
 * the client then does not send (a cut, an idle timeout) is given back when the request ends, so the
 * window counts the bytes that passed.
 */
export class FileBytesLimiter {
  private constructor(private readonly limiter: RateLimiterAbstract, readonly limit: number) {}

  static redis(redis: Redis | Cluster, limit: number, keyPrefix: string): FileBytesLimiter {
    const base = { points: limit, duration: 3600, keyPrefix: `${keyPrefix}:file-bytes` };
    return new FileBytesLimiter(new RateLimiterRedis({
      ...base, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(base),
    }), limit);
  }

  static memory(limit: number, keyPrefix: string): FileBytesLimiter {
    return new FileBytesLimiter(new RateLimiterMemory({ points: limit, duration: 3600, keyPrefix: `${keyPrefix}:file-bytes` }), limit);
  }

  /** Reserves `bytes`; refused (and nothing kept) when the window has not that many left. */
  async reserve(clientKey: string, bytes: number): Promise<LimitDecision> {
    if (bytes > this.limit) return decide(this.limit, this.limit + 1, 3_600_000);
    try {
      const res = await this.limiter.consume(clientKey, bytes);
      return decide(this.limit, res.consumedPoints, res.msBeforeNext);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      await this.giveBack(clientKey, bytes);
      return decide(this.limit, Math.max(err.consumedPoints, this.limit + 1), err.msBeforeNext);
    }
  }

  /** Returns bytes reserved but not sent. Never throws: a lost give-back only makes the window stricter. */
  async giveBack(clientKey: string, bytes: number): Promise<void> {
    if (bytes <= 0) return;
    await this.limiter.reward(clientKey, bytes).catch(() => undefined);
  }
}

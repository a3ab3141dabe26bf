import type { LimitPolicy } from '../../src/domain/limit-policy';
import type { RateLimiter } from '../../src/domain/rate-limiter';

export interface LimiterUnderTest {
  limiter: RateLimiter;
  close(): Promise<void>;
}

/** The behaviour every RateLimiter must have, run against each implementation (H4). */
export function rateLimiterContract(make: (policy: LimitPolicy) => Promise<LimiterUnderTest>): void {
  const policy: LimitPolicy = { windowSeconds: 2, limits: { create: 3, view: 5, stats: 2 } };
  let subject: LimiterUnderTest;

  beforeEach(async () => {
    subject = await make(policy);
  });

  afterEach(async () => {
    await subject.close();
  });

  it('when a key consumes up to its limit, then each is allowed with one less remaining, and the next is refused', async () => {
    const decisions = [];
    for (let i = 0; i < 4; i += 1) decisions.push(await subject.limiter.consume('create', 'client-a'));
    expect(decisions.map((d) => [d.allowed, d.remaining, d.limit])).toEqual([
      [true, 2, 3],
      [true, 1, 3],
      [true, 0, 3],
      [false, 0, 3],
    ]);
    for (const decision of decisions) {
      expect(decision.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(decision.resetSeconds).toBeLessThanOrEqual(2);
    }
  });

  it('when another key or another action is used, then it has its own budget', async () => {
    for (let i = 0; i < 3; i += 1) await subject.limiter.consume('create', 'client-a');
    expect((await subject.limiter.consume('create', 'client-a')).allowed).toBe(false);
    expect((await subject.limiter.consume('create', 'client-b')).allowed).toBe(true);
    expect((await subject.limiter.consume('view', 'client-a'))).toMatchObject({ allowed: true, limit: 5, remaining: 4 });
  });

  it('when the window ends, then the key is allowed again, although it kept knocking while refused', async () => {
    const started = Date.now();
    for (let i = 0; i < 2; i += 1) await subject.limiter.consume('stats', 'client-c');
    while (Date.now() - started < 1200) {
      expect((await subject.limiter.consume('stats', 'client-c')).allowed).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 2200 - Date.now())));
    expect(await subject.limiter.consume('stats', 'client-c')).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('when healthy, then decisions are not marked as fallbacks and the store reports healthy', async () => {
    const decision = await subject.limiter.consume('view', 'client-d');
    expect(decision.fromFallback).toBe(false);
    expect(subject.limiter.isStoreHealthy()).toBe(true);
  });
}

import { RetryPolicy } from './retry-policy';

describe('RetryPolicy', () => {
  const start = new Date('2026-01-01T00:00:00Z');
  const at = (ms: number) => new Date(start.getTime() + ms);

  it('when attempts fail one after another, then delays double up to the cap with at most three jittered values each', () => {
    const delays = new Set<number>();
    for (let i = 0; i < 200; i += 1) delays.add(new RetryPolicy({ initialDelayMs: 1000, maxDelayMs: 8000, horizonMs: 1e9 }).nextDelay(1, start, start)!);
    expect([...delays].sort((a, b) => a - b)).toEqual([500, 750, 1000]);
    const top = new RetryPolicy({ initialDelayMs: 1000, maxDelayMs: 8000, horizonMs: 1e9 }, () => 0.999);
    expect([1, 2, 3, 4, 5, 6].map((n) => top.nextDelay(n, start, start))).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
  });

  it('when the next try would fall past the horizon, then there is none', () => {
    const policy = new RetryPolicy({ initialDelayMs: 1000, maxDelayMs: 8000, horizonMs: 10_000 }, () => 0.999);
    expect(policy.nextDelay(3, start, at(5000))).toBe(4000);
    expect(policy.nextDelay(4, start, at(9000))).toBeUndefined();
  });
});

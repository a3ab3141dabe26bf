import { decide, rateLimitHeaders } from './limit-policy';

describe('decide', () => {
  it('when the count is within the limit, then it is allowed with what is left', () => {
    expect(decide(10, 3, 1500)).toEqual({ allowed: true, limit: 10, remaining: 7, resetSeconds: 2, fromFallback: false });
  });

  it('when the count reaches the limit exactly, then it is still allowed with none left', () => {
    expect(decide(10, 10, 100)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 1 });
  });

  it('when the count passes the limit, then it is refused and remaining never goes negative', () => {
    expect(decide(10, 15, 60_000)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 60 });
  });

  it('when the store reports no time left, then reset is still at least one second', () => {
    expect(decide(10, 1, 0).resetSeconds).toBe(1);
  });
});

describe('rateLimitHeaders', () => {
  it('when allowed, then the three RateLimit headers and no Retry-After', () => {
    expect(rateLimitHeaders(decide(20, 1, 3_600_000))).toEqual({
      'RateLimit-Limit': '20',
      'RateLimit-Remaining': '19',
      'RateLimit-Reset': '3600',
    });
  });

  it('when refused, then Retry-After equals the reset', () => {
    const headers = rateLimitHeaders(decide(20, 21, 42_000));
    expect(headers['Retry-After']).toBe('42');
    expect(headers['RateLimit-Remaining']).toBe('0');
  });
});

import { FileBytesLimiter } from './file-bytes-limiter';

describe('FileBytesLimiter (memory, as in the all-in-one)', () => {
  it('when PATCHes reserve their lengths, then what fits passes, what would pass the limit is refused whole and costs nothing, and unsent bytes come back', async () => {
    const limiter = FileBytesLimiter.memory(10_000, `test:${Math.random()}`);
    await expect(limiter.reserve('a', 6000)).resolves.toMatchObject({ allowed: true, remaining: 4000 });
    const refused = await limiter.reserve('a', 5000);
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.resetSeconds).toBeGreaterThan(3000);
    // The refusal kept nothing: 4000 still fit.
    await expect(limiter.reserve('a', 4000)).resolves.toMatchObject({ allowed: true, remaining: 0 });
    await limiter.giveBack('a', 2500); // a PATCH cut after 1500 of its 4000 bytes
    await expect(limiter.reserve('a', 2500)).resolves.toMatchObject({ allowed: true });
    await expect(limiter.reserve('a', 1)).resolves.toMatchObject({ allowed: false });
    // Another address has its own window; one PATCH larger than the whole limit is refused at once.
    await expect(limiter.reserve('b', 10_000)).resolves.toMatchObject({ allowed: true });
    await expect(limiter.reserve('c', 10_001)).resolves.toMatchObject({ allowed: false });
    await expect(limiter.reserve('c', 10_000)).resolves.toMatchObject({ allowed: true });
  });
});

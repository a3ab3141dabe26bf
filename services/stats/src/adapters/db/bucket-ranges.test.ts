import fc from 'fast-check';
import { bucketRanges } from './bucket-ranges';

describe('bucketRanges', () => {
  it('when any range is split, then whole hours plus ragged minutes cover exactly the same minutes', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 50_000 }), (from, length) => {
      const to = from + length;
      const { minutes, hours } = bucketRanges(from, to);
      let covered = 0;
      for (const [a, b] of minutes) {
        expect(a).toBeGreaterThanOrEqual(from);
        expect(b).toBeLessThanOrEqual(to);
        covered += b - a + 1;
      }
      if (hours) {
        expect(hours[0] * 60).toBeGreaterThanOrEqual(from);
        expect(hours[1] * 60 + 59).toBeLessThanOrEqual(to);
        covered += (hours[1] - hours[0] + 1) * 60;
      }
      expect(covered).toBe(length + 1);
      expect(minutes.reduce((n, [a, b]) => n + b - a + 1, 0)).toBeLessThanOrEqual(118);
    }));
  });

  it('when a 30-day window is split, then at most 720 hour rows and 118 minute rows are read', () => {
    const { minutes, hours } = bucketRanges(1_000_017, 1_000_017 + 30 * 1440 - 1);
    expect(hours && hours[1] - hours[0] + 1).toBeLessThanOrEqual(720);
    expect(minutes.reduce((n, [a, b]) => n + b - a + 1, 0)).toBeLessThanOrEqual(118);
  });
});

import { RandomPool } from './random-pool';

describe('RandomPool', () => {
  it('when pieces are taken across several blocks, then each has its length and no two share a byte of memory or a value', () => {
    const pool = new RandomPool(100);
    const pieces = Array.from({ length: 60 }, (_, i) => pool.take(7 + (i % 5)));
    const seen = new Set<string>();
    const ranges = new Map<ArrayBufferLike, Array<[number, number]>>();
    pieces.forEach((piece, i) => {
      expect(piece.length).toBe(7 + (i % 5));
      seen.add(piece.toString('hex'));
      const spans = ranges.get(piece.buffer) ?? [];
      for (const [start, end] of spans) {
        expect(piece.byteOffset >= end || piece.byteOffset + piece.length <= start).toBe(true);
      }
      spans.push([piece.byteOffset, piece.byteOffset + piece.length]);
      ranges.set(piece.buffer, spans);
    });
    expect(seen.size).toBe(pieces.length);
    expect(ranges.size).toBeGreaterThan(1); // the run crossed block boundaries
  });

  it('when a piece is kept and many more are taken, then the kept piece never changes', () => {
    const pool = new RandomPool(32);
    const kept = pool.take(16);
    const copy = Buffer.from(kept);
    for (let i = 0; i < 100; i += 1) pool.take(16);
    expect(kept.equals(copy)).toBe(true);
  });

  it('when a piece would not fit in what is left of the block, then it comes whole from a new block', () => {
    const pool = new RandomPool(10);
    const first = pool.take(6);
    const second = pool.take(6);
    expect(second.length).toBe(6);
    expect(second.buffer).not.toBe(first.buffer);
    expect(second.byteOffset).toBe(0);
  });

  it('when a piece larger than a block, zero or a fraction is asked for, then it is refused', () => {
    const pool = new RandomPool(16);
    expect(() => pool.take(17)).toThrow(RangeError);
    expect(() => pool.take(0)).toThrow(RangeError);
    expect(() => pool.take(1.5)).toThrow(RangeError);
    expect(() => new RandomPool(0)).toThrow(RangeError);
  });
});

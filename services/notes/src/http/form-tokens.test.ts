import { ManualClock } from '@vanish/common';
import { FormTokens, MemoryUsedTokenStore } from './form-tokens';

describe('FormTokens', () => {
  const clock = new ManualClock();
  const tokens = () => new FormTokens(Buffer.alloc(32, 3), new MemoryUsedTokenStore(clock), clock, 60_000);

  it('when a token is redeemed for its purpose and note, then it works once and never again', async () => {
    const t = tokens();
    const token = t.issue('reveal', 'note-a');
    expect(await t.redeem(token, 'reveal', 'note-a')).toBe(true);
    expect(await t.redeem(token, 'reveal', 'note-a')).toBe(false);
  });

  it('when a token is used for another note, another purpose, after expiry or tampered, then it fails', async () => {
    const t = tokens();
    expect(await t.redeem(t.issue('reveal', 'note-a'), 'reveal', 'note-b')).toBe(false);
    expect(await t.redeem(t.issue('create'), 'reveal', '')).toBe(false);
    const old = t.issue('create');
    clock.advance(61_000);
    expect(await t.redeem(old, 'create')).toBe(false);
    const good = t.issue('create');
    const [body, sig] = good.split('.');
    const forged = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), e: 9e15 })).toString('base64url')}.${sig}`;
    expect(await t.redeem(forged, 'create')).toBe(false);
    expect(await t.redeem(undefined, 'create')).toBe(false);
    expect(await t.redeem('x'.repeat(600), 'create')).toBe(false);
  });

  it('when tokens are signed with another key, then they are refused', async () => {
    const other = new FormTokens(Buffer.alloc(32, 4), new MemoryUsedTokenStore(clock), clock);
    expect(await tokens().redeem(other.issue('create'), 'create')).toBe(false);
  });
});

import { UnsubscribeTokens } from './unsubscribe-tokens';
import { AddressHasher } from './address-hasher';

describe('UnsubscribeTokens', () => {
  const key = Buffer.alloc(32, 1);
  const tokens = new UnsubscribeTokens(key);
  const hash = new AddressHasher(key).hash('bob@example.com');

  it('when a token was issued, then it verifies to the address hash and never contains the address', () => {
    const token = tokens.issue(hash);
    expect(tokens.verify(token)).toBe(hash);
    expect(token).not.toContain('bob');
    expect(token).toMatch(/^u1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('when a token is altered or made with another key, then it does not verify', () => {
    const token = tokens.issue(hash);
    const other = new UnsubscribeTokens(Buffer.alloc(32, 2)).issue(hash);
    expect(tokens.verify(other)).toBeUndefined();
    expect(tokens.verify(token.slice(0, -2) + (token.endsWith('A') ? 'BB' : 'AA'))).toBeUndefined();
    const [, , tag] = token.split('.');
    const otherHash = new AddressHasher(key).hash('eve@example.com');
    expect(tokens.verify(`u1.${Buffer.from(otherHash, 'hex').toString('base64url')}.${tag}`)).toBeUndefined();
    expect(tokens.verify('garbage')).toBeUndefined();
    // base64 spare bits: another spelling of the same bytes is not the token
    const last = token.slice(-1);
    const sibling = token.slice(0, -1) + String.fromCharCode(last.charCodeAt(0) ^ 1);
    expect(tokens.verify(sibling)).toBeUndefined();
  });

  it('when two addresses differ only in case, then they hash the same', () => {
    const hasher = new AddressHasher(key);
    expect(hasher.hash('Bob@Example.com')).toBe(hasher.hash('bob@example.com'));
    expect(hasher.hash('bob@example.com')).not.toBe(new AddressHasher(Buffer.alloc(32, 9)).hash('bob@example.com'));
  });
});

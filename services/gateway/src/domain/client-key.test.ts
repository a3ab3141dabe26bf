import { createClientKeyDeriver, deriveClientKey, expandIpv6, normalizeClientAddress } from './client-key';

const secret = Buffer.alloc(32, 7);

describe('normalizeClientAddress', () => {
  it('when given IPv4, then it is kept as is', () => {
    expect(normalizeClientAddress('203.0.113.9')).toBe('203.0.113.9');
  });

  it('when given an IPv4-mapped IPv6 address in either notation, then it counts as the IPv4 address', () => {
    expect(normalizeClientAddress('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(normalizeClientAddress('::ffff:cb00:7109')).toBe('203.0.113.9');
    expect(normalizeClientAddress('0:0:0:0:0:ffff:203.0.113.9')).toBe('203.0.113.9');
  });

  it('when given two IPv6 addresses in the same /64, then they normalize alike; another /64 differs', () => {
    const a = normalizeClientAddress('2001:db8:1:2:aaaa::1');
    const b = normalizeClientAddress('2001:0db8:0001:0002:ffff:ffff:ffff:fffe');
    const c = normalizeClientAddress('2001:db8:1:3::1');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });

  it('when given a zone index or brackets, then they are ignored', () => {
    expect(normalizeClientAddress('[fe80::1%eth0]')).toBe('fe80:0:0:0::/64');
  });

  it('when given the IPv6 loopback or ::, then it is a valid /64 of zeros', () => {
    expect(normalizeClientAddress('::1')).toBe('0:0:0:0::/64');
    expect(normalizeClientAddress('::')).toBe('0:0:0:0::/64');
  });

  it('when given something that is not an address, then it is still a stable, distinct key source', () => {
    expect(normalizeClientAddress('unknown')).toBe('other:unknown');
  });
});

describe('expandIpv6', () => {
  it('when given compressed forms, then eight groups come back', () => {
    expect(expandIpv6('1::')).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(expandIpv6('::2')).toEqual([0, 0, 0, 0, 0, 0, 0, 2]);
    expect(expandIpv6('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(expandIpv6('64:ff9b::192.0.2.33')).toEqual([0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x0221]);
  });
});

describe('deriveClientKey', () => {
  it('when the same client comes back, then the key is the same, and it does not contain the address', () => {
    const key = deriveClientKey(secret, '198.51.100.7');
    expect(key).toBe(deriveClientKey(secret, '::ffff:198.51.100.7'));
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(key).not.toContain('198');
  });

  it('when the secret differs, then the key differs (keys cannot be precomputed without it)', () => {
    expect(deriveClientKey(secret, '198.51.100.7')).not.toBe(deriveClientKey(Buffer.alloc(32, 8), '198.51.100.7'));
  });

  it('when two addresses differ, then their keys differ', () => {
    expect(deriveClientKey(secret, '198.51.100.7')).not.toBe(deriveClientKey(secret, '198.51.100.8'));
  });
});

describe('createClientKeyDeriver', () => {
  it('when asked again or past its size, then it answers exactly as deriveClientKey', () => {
    const derive = createClientKeyDeriver(secret, 2);
    const addresses = ['198.51.100.1', '198.51.100.2', '198.51.100.1', '198.51.100.3', '198.51.100.2', '2001:db8::1'];
    for (const address of addresses) expect(derive(address)).toBe(deriveClientKey(secret, address));
  });
});

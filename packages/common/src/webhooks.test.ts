import { checkWebhookAddresses, isForbiddenAddress, parseWebhookUrl } from './webhooks';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1',
    '255.255.255.255', '::1', '::', 'fe80::1', 'fd00:ec2::254', 'fc00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1',
    '[::1]', '::ffff:169.254.169.254', 'not an address',
  ])('when the address is %s, then it is refused', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('when the address is public (%s), then it is allowed', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });

  // Issue 32: IPv6 forms that carry an IPv4 address, as written and as the URL parser writes them back
  // (`new URL('http://[::127.0.0.1]/').hostname` is `[::7f00:1]`).
  it.each([
    ['IPv4-compatible (deprecated ::/96), loopback', '::127.0.0.1'],
    ['IPv4-compatible, as the URL parser writes it', '::7f00:1'],
    ['IPv4-compatible, private', '::10.0.0.1'],
    ['IPv4-compatible, metadata', '[::169.254.169.254]'],
    ['IPv4-compatible, even public (deprecated)', '::8.8.8.8'],
    ['IPv4-mapped, written in hex', '::ffff:a9fe:a9fe'],
    ['IPv4-mapped, CGNAT', '::ffff:100.64.0.1'],
    ['IPv4-translated ::ffff:0:0:0/96, loopback', '::ffff:0:127.0.0.1'],
    ['IPv4-translated, private', '::ffff:0:192.168.0.1'],
    ['NAT64 64:ff9b::/96, loopback', '64:ff9b::127.0.0.1'],
    ['NAT64, metadata', '64:ff9b::a9fe:a9fe'],
    ['NAT64, private', '64:ff9b::10.1.2.3'],
    ['local-use NAT64 64:ff9b:1::/48, private', '64:ff9b:1::10.0.0.1'],
    ['local-use NAT64, even public', '64:ff9b:1:ffff::8.8.8.8'],
    ['6to4 2002::/16, loopback', '2002:7f00:1::1'],
    ['6to4, private', '2002:c0a8:101::1'],
    ['6to4, metadata', '2002:a9fe:a9fe:1:2:3:4:5'],
    ['Teredo 2001::/32, client loopback (inverted)', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['Teredo, client private (inverted)', '2001:0:4136:e378:8000:63bf:f5ff:fffe'],
    ['Teredo, server private', '2001:0:a00:1:8000:63bf:f7f7:f7f7'],
    ['ISATAP in a public prefix, loopback', '2a00:1450:4001:1::5efe:127.0.0.1'],
    ['ISATAP with the u bit, private', '2a00:1450:4001:1:200:5efe:10.0.0.1'],
    ['ISATAP in a public prefix, metadata', '2a00:1450:4001:1:0:5efe:a9fe:a9fe'],
    ['site-local (deprecated fec0::/10)', 'fec0::1'],
    ['discard-only 100::/64', '100::1'],
    ['documentation 2001:db8::/32', '2001:db8::1'],
  ])('when the address is %s (%s), then it is refused', (_form, address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    ['NAT64 of a public address (DNS64 on an IPv6-only host)', '64:ff9b::8.8.8.8'],
    ['IPv4-translated public', '::ffff:0:8.8.8.8'],
    ['6to4 of a public address', '2002:808:808::1'],
    ['Teredo with public server and client', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    ['ISATAP of a public address', '2a00:1450:4001:1::5efe:8.8.8.8'],
    ['global unicast whose interface id only looks alike', '2a00:1450:4001:1:400:5efe:7f00:1'],
  ])('when the address is %s (%s), then it is allowed', (_form, address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('parseWebhookUrl', () => {
  it('when the URL is https, then it is accepted in production', () => {
    expect(parseWebhookUrl('https://hooks.example.com/x', { requireHttps: true }).ok).toBe(true);
  });

  it.each([
    ['http://hooks.example.com/x', true],
    ['ftp://hooks.example.com/x', false],
    ['not a url', false],
    ['https://user:pass@hooks.example.com/', false],
    [`https://hooks.example.com/${'a'.repeat(2_040)}`, false],
  ])('when the URL is %s (https required: %s), then it is refused', (url, requireHttps) => {
    expect(parseWebhookUrl(url, { requireHttps }).ok).toBe(false);
  });
});

describe('checkWebhookAddresses', () => {
  const resolveTo = (addresses: string[]) => async () => addresses;

  it('when a name resolves to a private address among public ones, then it is refused', async () => {
    const refused = await checkWebhookAddresses(new URL('https://rebind.example/'), resolveTo(['8.8.8.8', '10.0.0.5']), false);
    expect(refused).toMatch(/public addresses only/);
  });

  it('when a literal IPv6 loopback is named, then it is refused without a lookup', async () => {
    const refused = await checkWebhookAddresses(new URL('https://[::1]/'), () => { throw new Error('no lookup expected'); }, false);
    expect(refused).toMatch(/public addresses only/);
  });

  it('when the name does not resolve, then it is refused', async () => {
    const refused = await checkWebhookAddresses(new URL('https://nowhere.invalid/'), async () => { throw new Error('ENOTFOUND'); }, false);
    expect(refused).toMatch(/does not resolve/);
  });

  it('when private networks are allowed (tests), then nothing is checked', async () => {
    expect(await checkWebhookAddresses(new URL('http://127.0.0.1:1/'), resolveTo([]), true)).toBeNull();
  });
});

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

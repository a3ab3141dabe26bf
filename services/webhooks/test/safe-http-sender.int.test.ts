import { SafeHttpSender } from '../src/adapters/http/safe-http-sender';
import { startReceiver, type Receiver } from './support/receiver';

jest.setTimeout(60_000);

/** SSRF protection at delivery (DECISIONS 11), against a real receiver listening on loopback. */
describe('SafeHttpSender', () => {
  let receiver: Receiver;
  const strict = new SafeHttpSender({ allowPrivateNetworks: false, timeoutMs: 2_000, maxResponseBytes: 1024 });
  const request = (url: string) => ({ url, headers: { 'webhook-id': 'x' }, body: '{}' });

  beforeAll(async () => { receiver = await startReceiver(); });
  afterAll(async () => { await receiver.close(); });

  it.each([
    (port: number) => `http://127.0.0.1:${port}/`,
    (port: number) => `http://localhost:${port}/`,
    (port: number) => `http://[::1]:${port}/`,
    (port: number) => `http://[::ffff:127.0.0.1]:${port}/`,
    (port: number) => `http://[::ffff:7f00:1]:${port}/`,
    // Issue 32: IPv4-compatible (deprecated ::/96), translated, NAT64, 6to4 and ISATAP forms of loopback.
    (port: number) => `http://[::127.0.0.1]:${port}/`,
    (port: number) => `http://[::ffff:0:127.0.0.1]:${port}/`,
    (port: number) => `http://[64:ff9b::127.0.0.1]:${port}/`,
    (port: number) => `http://[2002:7f00:1::1]:${port}/`,
    (port: number) => `http://[2a00:1450:4001:1::5efe:127.0.0.1]:${port}/`,
    () => 'http://10.0.0.1/',
    () => 'http://169.254.169.254/latest/meta-data/',
    () => 'http://100.64.0.1/',
    () => 'http://[fd00:ec2::254]/',
  ])('when the target is forbidden (case %#), then it is refused and never connected to', async (target) => {
    const before = receiver.connections;
    await expect(strict.send(request(target(receiver.port)))).rejects.toMatchObject({ name: 'RefusedTargetError' });
    expect(receiver.connections).toBe(before);
    expect(receiver.received).toHaveLength(0);
  });

  it('when private networks are allowed (tests), then the loopback receiver is reached and its status returned', async () => {
    const open = new SafeHttpSender({ allowPrivateNetworks: true, timeoutMs: 2_000, maxResponseBytes: 1024 });
    await expect(open.send(request(receiver.url()))).resolves.toMatchObject({ status: 204 });
  });

  it('when the receiver redirects, then the redirect is not followed', async () => {
    const http = await import('node:http');
    let hits = 0;
    const server = http.createServer((_req, res) => { hits += 1; res.writeHead(302, { location: 'http://169.254.169.254/' }); res.end(); });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const open = new SafeHttpSender({ allowPrivateNetworks: true, timeoutMs: 2_000, maxResponseBytes: 1024 });
    await expect(open.send(request(`http://127.0.0.1:${port}/`))).resolves.toMatchObject({ status: 302 });
    expect(hits).toBe(1);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('when the receiver streams an endless answer, then the read stops at the cap', async () => {
    const http = await import('node:http');
    const server = http.createServer((_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write(Buffer.alloc(16 * 1024, 97)), 5);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const open = new SafeHttpSender({ allowPrivateNetworks: true, timeoutMs: 10_000, maxResponseBytes: 64 * 1024 });
    await expect(open.send(request(`http://127.0.0.1:${port}/`))).resolves.toMatchObject({ status: 200 });
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireService } from '@vanish/testkit/services';
import { startGateway, testPrefix, type RunningGateway } from './support/gateway-harness';
import { send } from './support/http-client';
import { deleteKeysWithPrefix } from './support/redis-keys';
import { TestUpstream } from './support/test-upstream';

const json = { 'Content-Type': 'application/json' };

describe('gateway at the edge: client addresses, CORS, HTTPS, shutdown', () => {
  const notes = new TestUpstream('notes');
  const stats = new TestUpstream('stats');
  const prefixes: string[] = [];
  const gateways: RunningGateway[] = [];
  let certDir: string;

  const gateway = async (env: Record<string, string> = {}): Promise<RunningGateway> => {
    const prefix = testPrefix('edge');
    prefixes.push(prefix);
    const running = await startGateway({
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMIT_KEY_PREFIX: prefix,
      NOTES_URL: notes.url,
      STATS_URL: stats.url,
      ...env,
    });
    gateways.push(running);
    return running;
  };

  const create = (gw: RunningGateway, forwardedFor: string) =>
    send(`${gw.url}/api/create.php`, { method: 'POST', headers: { ...json, 'X-Forwarded-For': forwardedFor }, body: '{"content":"x"}' });

  beforeAll(async () => {
    await requireService('redis');
    await Promise.all([notes.start(), stats.start()]);
    certDir = mkdtempSync(join(tmpdir(), 'gateway-tls-'));
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1',
      '-keyout', join(certDir, 'key.pem'), '-out', join(certDir, 'cert.pem'),
    ], { stdio: 'ignore' });
  });

  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.stop()));
    await Promise.all([notes.stop(), stats.stop()]);
    await Promise.all(prefixes.map((prefix) => deleteKeysWithPrefix(prefix)));
    rmSync(certDir, { recursive: true, force: true });
  });

  describe('client address', () => {
    it('when X-Forwarded-For changes on every create from one untrusted peer, then the 11th is still 429', async () => {
      const gw = await gateway();
      for (let i = 1; i <= 10; i += 1) expect((await create(gw, `198.51.100.${i}`)).status).toBe(200);
      expect((await create(gw, '198.51.100.11')).status).toBe(429);
    });

    it('when TRUST_PROXY names the loopback proxy, then the forwarded address is the client', async () => {
      const gw = await gateway({ TRUST_PROXY: 'loopback' });
      for (let i = 0; i < 10; i += 1) expect((await create(gw, '203.0.113.5')).status).toBe(200);
      expect((await create(gw, '203.0.113.5')).status).toBe(429);
      expect((await create(gw, '10.9.8.7, 203.0.113.6')).status).toBe(200);
      expect(notes.seen.at(-1)?.headers['x-forwarded-for']).toBe('203.0.113.6');
    });

    it('when forwarded IPv6 addresses share a /64, then they share one budget; another /64 has its own', async () => {
      const gw = await gateway({ TRUST_PROXY: 'loopback', RATE_LIMIT_CREATE_PER_HOUR: '2' });
      expect((await create(gw, '2001:db8:aa:1::1')).status).toBe(200);
      expect((await create(gw, '2001:db8:aa:1:ffff:ffff:ffff:fffe')).status).toBe(200);
      expect((await create(gw, '2001:db8:aa:1::9')).status).toBe(429);
      expect((await create(gw, '2001:db8:aa:2::1')).status).toBe(200);
      expect((await create(gw, '::ffff:192.0.2.1')).status).toBe(200);
      expect((await create(gw, '192.0.2.1')).status).toBe(200);
      expect((await create(gw, '192.0.2.1')).status).toBe(429);
    });
  });

  describe('CORS', () => {
    it('when CORS_ORIGINS lists an origin, then only that origin gets CORS headers, and only on /api', async () => {
      const gw = await gateway({ CORS_ORIGINS: 'https://app.example' });
      const allowed = await send(`${gw.url}/api/stats.php`, { headers: { Origin: 'https://app.example' } });
      expect(allowed.status).toBe(200);
      expect(allowed.headers['access-control-allow-origin']).toBe('https://app.example');
      expect(allowed.headers['access-control-expose-headers']).toMatch(/RateLimit-Remaining/);
      expect(allowed.headers.vary).toMatch(/Origin/);
      // An upstream's own Vary is added to the gateway's, not put in its place.
      stats.mode = 'own-headers';
      try {
        const varied = await send(`${gw.url}/api/stats.php`, { headers: { Origin: 'https://app.example' } });
        expect(varied.headers.vary).toBe('Origin, Accept-Language');
        expect(varied.headers['access-control-allow-origin']).toBe('https://app.example');
      } finally {
        stats.mode = 'ok';
      }

      const preflight = await send(`${gw.url}/api/create.php`, {
        method: 'OPTIONS',
        headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.allow).toBe('POST, OPTIONS');
      expect(preflight.headers['access-control-allow-methods']).toBe('POST');
      expect(preflight.headers['access-control-allow-headers']).toMatch(/Content-Type/);

      const other = await send(`${gw.url}/api/stats.php`, { headers: { Origin: 'https://evil.example' } });
      expect(other.headers['access-control-allow-origin']).toBeUndefined();
      const page = await send(`${gw.url}/`, { headers: { Origin: 'https://app.example' } });
      expect(page.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('HTTPS', () => {
    it('when REQUIRE_HTTPS is on and a request comes over plain HTTP, then /api answers 400 HTTPS_REQUIRED and pages redirect', async () => {
      const gw = await gateway({ REQUIRE_HTTPS: 'true' });
      const api = await send(`${gw.url}/api/stats.php`);
      expect(api.status).toBe(400);
      expect(api.json()).toMatchObject({ code: 'HTTPS_REQUIRED' });
      expect(api.headers['api-version']).toBe('1.2.0');
      const page = await send(`${gw.url}/?a=1`, { headers: { Host: 'notes.example:8080' } });
      expect(page.status).toBe(308);
      expect(page.headers.location).toBe('https://notes.example/?a=1');
      expect(page.headers['strict-transport-security']).toBeUndefined();
    });

    it('when a trusted proxy says the request came over HTTPS, then it passes and carries HSTS', async () => {
      const gw = await gateway({ REQUIRE_HTTPS: 'true', TRUST_PROXY: 'loopback' });
      const answer = await send(`${gw.url}/api/stats.php`, { headers: { 'X-Forwarded-Proto': 'https' } });
      expect(answer.status).toBe(200);
      expect(answer.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      // An untrusted peer cannot claim HTTPS.
      const spoofed = await gateway({ REQUIRE_HTTPS: 'true' });
      expect((await send(`${spoofed.url}/api/stats.php`, { headers: { 'X-Forwarded-Proto': 'https' } })).status).toBe(400);
    });

    it('when TLS_CERT_FILE and TLS_KEY_FILE are set, then the gateway speaks HTTPS with HSTS on every answer', async () => {
      const gw = await gateway({ TLS_CERT_FILE: join(certDir, 'cert.pem'), TLS_KEY_FILE: join(certDir, 'key.pem'), REQUIRE_HTTPS: 'true' });
      expect(gw.url).toMatch(/^https:/);
      const ca = readFileSync(join(certDir, 'cert.pem'));
      const ok = await send(`${gw.url}/api/stats.php`, { ca });
      expect(ok.status).toBe(200);
      expect(ok.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      const missing = await send(`${gw.url}/api/nothing.php`, { ca });
      expect(missing.status).toBe(404);
      expect(missing.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      expect(stats.seen.at(-1)?.headers['x-forwarded-proto']).toBe('https');
    });
  });

  describe('shutdown', () => {
    it('when the gateway stops during a request, then that request completes and new connections are refused', async () => {
      const gw = await gateway();
      notes.mode = 'slow';
      try {
        const inFlight = send(`${gw.url}/api/openapi.json`, { timeoutMs: 5000 });
        await new Promise((resolve) => setTimeout(resolve, 100));
        const stopping = gw.stop();
        // The admin port closes last, so orchestrators see "not ready" while requests drain.
        expect((await send(`${gw.adminUrl}/readyz`)).status).toBe(503);
        const answer = await inFlight;
        expect(answer.status).toBe(200);
        expect(answer.json()).toMatchObject({ slow: true });
        await stopping;
        await expect(send(`${gw.url}/api/openapi.json`, { timeoutMs: 2000 })).rejects.toThrow(/ECONNREFUSED/);
      } finally {
        notes.mode = 'ok';
      }
    });
  });
});

import { Redis } from 'ioredis';
import { createTestCa, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { startTlsRedis, type TlsServer } from '@vanish/testkit/tls-servers';
import { waitFor } from '@vanish/testkit/net';
import { deriveClientKey } from '../src';
import { startGateway, testPrefix, TEST_LIMITER_KEY, type RunningGateway } from './support/gateway-harness';

/**
 * The gateway's limiter on a Redis of our own that has only a TLS port (`--port 0 --tls-port`):
 * whatever reaches Redis went over TLS. REDIS_TLS_CA is the test's throwaway CA.
 */
describe('gateway limits over rediss:// (our own TLS-only Redis, throwaway CA)', () => {
  let ca: TestCertificateAuthority;
  let otherCa: TestCertificateAuthority;
  let server: TlsServer;
  let gateway: RunningGateway | undefined;

  beforeAll(async () => {
    ca = createTestCa('vanish test CA');
    otherCa = createTestCa('someone else');
    server = await startTlsRedis({ caFile: ca.caFile, certificate: ca.issue('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] }) });
  }, 60_000);

  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
  });

  afterAll(async () => {
    await server?.stop();
    ca?.remove();
    otherCa?.remove();
  });

  it('when REDIS_URL is rediss:// and REDIS_TLS_CA the server\'s CA, then counts are kept in Redis over TLS', async () => {
    const prefix = testPrefix('tls');
    gateway = await startGateway({ REDIS_URL: `rediss://127.0.0.1:${server.port}`, REDIS_TLS_CA: ca.ca, RATE_LIMIT_KEY_PREFIX: prefix });
    const clientKey = deriveClientKey(Buffer.from(TEST_LIMITER_KEY, 'base64'), '127.0.0.1');
    const decision = await gateway.service.limiter.consume('create', clientKey);
    expect(decision).toMatchObject({ allowed: true });
    expect(gateway.service.limiter.isStoreHealthy()).toBe(true);

    const reader = new Redis({ host: '127.0.0.1', port: server.port, tls: { ca: ca.ca }, lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await reader.connect();
      expect(await reader.get(`${prefix}:create:${clientKey}`)).toBe('1');
      // No plaintext port at all: what reached this server came over TLS.
      expect(await reader.config('GET', 'port')).toEqual(['port', '0']);
    } finally {
      reader.disconnect();
    }
  });

  it('when REDIS_TLS_CA is another CA, then Redis is never used: the certificate is refused and limits fall back to memory', async () => {
    gateway = await startGateway({ REDIS_URL: `rediss://127.0.0.1:${server.port}`, REDIS_TLS_CA: otherCa.ca, RATE_LIMIT_KEY_PREFIX: testPrefix('tls-wrong-ca') });
    await waitFor(() => gateway!.logs.text().match(/redis connection error/), { timeoutMs: 10_000, description: 'a redis connection error' });
    expect(gateway.logs.text()).toMatch(/self[- ]signed|unable to (verify|get)|certificate/i);
    const decision = await gateway.service.limiter.consume('create', 'someone');
    expect(decision).toMatchObject({ allowed: true });
    expect(gateway.service.limiter.isStoreHealthy()).toBe(false);
  });
});

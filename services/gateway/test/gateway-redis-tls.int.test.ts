import { Cluster, Redis } from 'ioredis';
import { freePort, waitFor } from '@vanish/testkit/net';
import { createTestCa, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { startTlsRedis, type TlsServer } from '@vanish/testkit/tls-servers';
import { deriveClientKey } from '../src';
import { startGateway, testPrefix, TEST_LIMITER_KEY, type RunningGateway } from './support/gateway-harness';

// One throwaway CA the servers' certificates chain to, another that must be refused.
let ca: TestCertificateAuthority;
let otherCa: TestCertificateAuthority;
let gateway: RunningGateway | undefined;

beforeAll(() => {
  ca = createTestCa('vanish test CA');
  otherCa = createTestCa('someone else');
});

afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
});

afterAll(() => {
  ca?.remove();
  otherCa?.remove();
});

/**
 * The gateway's limiter on a Redis of our own that has only a TLS port (`--port 0 --tls-port`):
 * whatever reaches Redis went over TLS. REDIS_TLS_CA is the test's throwaway CA.
 */
describe('gateway limits over rediss:// (our own TLS-only Redis, throwaway CA)', () => {
  let server: TlsServer;

  beforeAll(async () => {
    server = await startTlsRedis({ caFile: ca.caFile, certificate: ca.issue('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] }) });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
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

/**
 * The gateway's limiter on a Redis Cluster over TLS: one cluster-enabled node of our own that serves
 * every slot and has only a TLS port (`--port 0 --tls-port`, `--tls-cluster yes`), so the slot map it
 * hands ioredis names its TLS port and whatever reached it went over TLS. The failover of a Cluster is
 * proven in test/cluster/redis-cluster-limits.cluster.test.ts; this is REDIS_CLUSTER_TLS's test.
 */
describe('gateway limits on a Redis Cluster over TLS (REDIS_CLUSTER_TLS, throwaway CA)', () => {
  let server: TlsServer;
  const reader = (): Cluster => new Cluster([{ host: '127.0.0.1', port: server.port }], { redisOptions: { tls: { ca: ca.ca } }, lazyConnect: true });

  beforeAll(async () => {
    server = await startTlsRedis({
      caFile: ca.caFile, certificate: ca.issue('localhost', { dns: ['localhost'], ip: ['127.0.0.1'] }),
      serverArgs: ['--cluster-enabled', 'yes', '--cluster-port', String(await freePort()), '--tls-cluster', 'yes', '--cluster-config-file', 'nodes.conf',
        // A lone node never learns its own address from a peer: announce it, as a real node's is known.
        '--cluster-announce-ip', '127.0.0.1'],
    });
    const admin = new Redis({ host: '127.0.0.1', port: server.port, tls: { ca: ca.ca }, lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await admin.connect();
      await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
      await waitFor(async () => /cluster_state:ok/.test(String(await admin.call('CLUSTER', 'INFO'))), { timeoutMs: 30_000, description: 'the one-node cluster ok' });
    } finally {
      admin.disconnect();
    }
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('when REDIS_CLUSTER_TLS is true and REDIS_TLS_CA the nodes\' CA, then counts are kept in the cluster over TLS', async () => {
    const prefix = testPrefix('cluster-tls');
    gateway = await startGateway({ REDIS_CLUSTER_NODES: `127.0.0.1:${server.port}`, REDIS_CLUSTER_TLS: 'true', REDIS_TLS_CA: ca.ca, RATE_LIMIT_KEY_PREFIX: prefix });
    const clientKey = deriveClientKey(Buffer.from(TEST_LIMITER_KEY, 'base64'), '127.0.0.1');
    expect(await gateway.service.limiter.consume('create', clientKey)).toMatchObject({ allowed: true, fromFallback: false });
    expect(gateway.service.limiter.isStoreHealthy()).toBe(true);

    const cluster = reader();
    try {
      await cluster.connect();
      expect(await cluster.get(`${prefix}:create:${clientKey}`)).toBe('1');
    } finally {
      cluster.disconnect();
    }
  });

  it('when REDIS_TLS_CA is another CA, then the cluster is never used: the nodes are refused and limits fall back to memory', async () => {
    const prefix = testPrefix('cluster-tls-wrong-ca');
    gateway = await startGateway({ REDIS_CLUSTER_NODES: `127.0.0.1:${server.port}`, REDIS_CLUSTER_TLS: 'true', REDIS_TLS_CA: otherCa.ca, RATE_LIMIT_KEY_PREFIX: prefix });
    // ioredis does not pass on why a Cluster node's handshake failed (docs/gateway.md): only that it closed.
    await waitFor(() => gateway!.logs.text().match(/redis (cluster node )?connection error/), { timeoutMs: 10_000, description: 'a redis connection error' });
    expect(await gateway.service.limiter.consume('create', 'someone')).toMatchObject({ allowed: true, fromFallback: true });
    expect(gateway.service.limiter.isStoreHealthy()).toBe(false);

    const cluster = reader();
    try {
      await cluster.connect();
      expect(await cluster.keys(`${prefix}:*`)).toEqual([]);
    } finally {
      cluster.disconnect();
    }
  });
});

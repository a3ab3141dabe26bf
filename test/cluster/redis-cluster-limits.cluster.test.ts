import { Cluster } from 'ioredis';
import { silentLogger } from '@vanish/common';
import { clusterClientOptions } from '../../services/gateway/src/adapters/limiter/redis-cluster';
import { RedisRateLimiter } from '../../services/gateway/src/adapters/limiter/redis-rate-limiter';
import { rateLimiterContract } from '../../services/gateway/test/contract/rate-limiter.contract';
import { testPrefix } from '../../services/gateway/test/support/gateway-harness';
import { startLimitedGateways, type LimitedGateways } from './support/limited-gateways';
import { CLUSTER_NODE_TIMEOUT_MS, startRedisCluster, type RedisClusterUnderTest } from './support/redis-cluster';

const LIMIT = 120;

let cluster: RedisClusterUnderTest;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

/**
 * rate-limiter-flexible's Redis limiter on ioredis's Cluster client, made with the gateway's own
 * options: every operation the limiter makes touches one key, so one slot (a CROSSSLOT would fail here).
 */
describe('RedisRateLimiter on a Redis Cluster', () => {
  rateLimiterContract(async (policy) => {
    const connection = { commandTimeout: 1000, connectTimeout: 2000, maxRetriesPerRequest: 1, autoResendUnfulfilledCommands: false, retryStrategy: () => 200 };
    const settings = { nodes: cluster.nodes, tls: false };
    const redis = new Cluster(settings.nodes, clusterClientOptions(settings, connection, undefined));
    await new Promise<void>((resolve, reject) => {
      redis.once('ready', () => resolve());
      redis.once('error', reject);
    });
    const limiter = new RedisRateLimiter({ redis, policy, keyPrefix: testPrefix('cluster-contract'), retryIntervalMs: 1000, logger: silentLogger });
    return {
      limiter,
      close: async () => {
        await limiter.stop();
        redis.disconnect();
      },
    };
  });
});

/**
 * Two gateways share their create limit through a Redis Cluster (three masters, three replicas); the
 * master that serves the client's key is SIGKILLed in the middle of a stream of creates. Documented
 * (docs/gateway.md): never a 5xx, the failover is answered from each gateway's memory (overshoot at
 * most one limit per gateway), and the counts continue on the promoted replica.
 */
describe('gateway limits on a Redis Cluster, a master killed under load', () => {
  let limited: LimitedGateways;

  beforeAll(async () => {
    limited = await startLimitedGateways('cluster', LIMIT, { REDIS_CLUSTER_NODES: cluster.nodeList }, () => cluster.client());
  }, 60_000);

  afterAll(async () => {
    await limited?.stop();
  }, 60_000);

  it('when the master of the limit\'s slot dies during creates through two gateways, then no 5xx, the count continues on the promoted replica, and the limit holds within the documented overshoot', async () => {
    await limited.expectSharedCount(40);

    const oldMaster = await cluster.masterPortOf(limited.key);
    const { switchedMs } = await limited.failOver('redis cluster failover', () => cluster.kill(oldMaster),
      async () => (await cluster.masterPortOf(limited.key).catch(() => oldMaster)) !== oldMaster);
    expect(switchedMs).toBeGreaterThanOrEqual(CLUSTER_NODE_TIMEOUT_MS); // the cluster, not a retry, made the switch

    // The old master comes back as a replica of the promoted one: the cluster is whole again.
    await cluster.restart(oldMaster);
    expect(await cluster.masterPortOf(limited.key)).not.toBe(oldMaster);
  }, 180_000);
});

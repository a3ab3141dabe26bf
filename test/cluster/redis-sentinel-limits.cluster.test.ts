import { startLimitedGateways, type LimitedGateways } from './support/limited-gateways';
import { SENTINEL_NAME, startSentinelCluster, type SentinelCluster } from './support/redis-sentinel-cluster';

const LIMIT = 120;

/**
 * Two gateways share their create limit through Redis behind three Sentinels; the primary is
 * SIGKILLed in the middle of a stream of creates. Documented (docs/gateway.md): never a 5xx, the
 * switch is answered from each gateway's memory (overshoot at most one limit per gateway), and the
 * counts continue on the new primary.
 */
describe('gateway limits on Redis with Sentinel, primary killed under load', () => {
  let cluster: SentinelCluster;
  let limited: LimitedGateways;

  beforeAll(async () => {
    cluster = await startSentinelCluster();
    limited = await startLimitedGateways('sentinel', LIMIT, { REDIS_SENTINELS: cluster.sentinelList, REDIS_SENTINEL_NAME: SENTINEL_NAME }, () => cluster.client());
  }, 120_000);

  afterAll(async () => {
    await limited?.stop();
    await cluster?.stop();
  }, 60_000);

  it('when the primary dies during creates through two gateways, then no 5xx, the count continues on the new primary, and the limit holds within the documented overshoot', async () => {
    await limited.expectSharedCount(40);

    const oldPrimary = await cluster.primaryPort();
    await limited.failOver('redis sentinel switch', () => cluster.killPrimary(),
      async () => (await cluster.primaryPort().catch(() => oldPrimary)) !== oldPrimary);

    await cluster.restartAsReplica(oldPrimary);
  }, 180_000);
});

import { waitFor } from '@vanish/testkit/net';
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
    limited = await startLimitedGateways('sentinel', LIMIT, { REDIS_SENTINELS: cluster.sentinelList, REDIS_SENTINEL_NAME: SENTINEL_NAME });
  }, 120_000);

  afterAll(async () => {
    await limited?.stop();
    await cluster?.stop();
  }, 60_000);

  const counter = async (): Promise<number> => {
    const client = cluster.client();
    try {
      return Number((await client.get(limited.key)) ?? 0);
    } finally {
      client.disconnect();
    }
  };

  it('when the primary dies during creates through two gateways, then no 5xx, the count continues on the new primary, and the limit holds within the documented overshoot', async () => {
    for (let i = 0; i < 40; i += 1) expect(await limited.create()).toBe(200);
    expect(await counter()).toBe(40);
    expect(await limited.allStoresUp()).toBe(true);

    const oldPrimary = await cluster.killPrimary();
    const killedAt = Date.now();
    // Creates keep coming (about 20 a second) until the Sentinels named a new primary and both gateways use it.
    await waitFor(async () => {
      await limited.create();
      await new Promise((resolve) => setTimeout(resolve, 50));
      return (await cluster.primaryPort().catch(() => oldPrimary)) !== oldPrimary && (await limited.allStoresUp());
    }, { timeoutMs: 60_000, intervalMs: 0, description: 'a new primary in use by both gateways' });
    const switchedMs = Date.now() - killedAt;
    const afterSwitch = await counter();
    expect(afterSwitch).toBeGreaterThanOrEqual(40); // the replica had the counts

    await limited.createUntilLimited();
    const granted = limited.expectLimitHeld();
    expect(await counter()).toBeGreaterThanOrEqual(LIMIT);
    // Reported for docs/gateway.md (the measured switch); never asserted.
    process.stdout.write(`${JSON.stringify({ measured: 'redis sentinel switch', switchedMs, granted, overshoot: granted - LIMIT, requests: limited.statuses.length, slowestMs: limited.slowestMs() })}\n`);

    await cluster.restartAsReplica(oldPrimary);
  }, 180_000);
});

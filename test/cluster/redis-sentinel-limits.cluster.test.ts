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
    let killedAt = 0;
    await limited.failOver('redis sentinel switch', async () => { await cluster.killPrimary(); killedAt = Date.now(); },
      async () => (await cluster.primaryPort().catch(() => oldPrimary)) !== oldPrimary);

    // Each gateway tells the switch as what it is (issue 37): one warn naming the old and the new
    // primary, and not ioredis's "All sentinels are unreachable" while all three Sentinels are up.
    const newPrimary = await cluster.primaryPort();
    const switchLoggedMs: number[] = [];
    for (const gateway of limited.gateways) {
      const entries = gateway.logs.entries() as Array<{ level: string; msg: string; err?: string }>;
      const loud = entries.filter((entry) => entry.level === 'warn' || entry.level === 'error');
      expect(loud.filter((entry) => `${entry.msg} ${entry.err ?? ''}`.includes('All sentinels are unreachable'))).toEqual([]);
      const switches = loud.filter((entry) => entry.msg === 'redis primary switched');
      expect(switches).toEqual([expect.objectContaining({ level: 'warn', oldPrimary: expect.stringMatching(new RegExp(`:${oldPrimary}$`)), newPrimary: expect.stringMatching(new RegExp(`:${newPrimary}$`)) })]);
      switchLoggedMs.push(Date.parse(String((switches[0] as { time?: string }).time)) - killedAt);
    }
    // Kill to the gateway's ready connection on the new primary (its switch line), for docs/scaling.md.
    process.stdout.write(`${JSON.stringify({ measured: 'redis sentinel switch, kill to each gateway on the new primary', downAfterMs: 2000, switchLoggedMs })}\n`);

    await cluster.restartAsReplica(oldPrimary);
  }, 180_000);
});

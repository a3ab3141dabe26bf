import { deriveClientKey } from '@vanish/gateway';
import { waitFor } from '@vanish/testkit/net';
import { startGateway, testPrefix, TEST_LIMITER_KEY, type RunningGateway } from '../../services/gateway/test/support/gateway-harness';
import { send } from '../../services/gateway/test/support/http-client';
import { TestUpstream } from '../../services/gateway/test/support/test-upstream';
import { SENTINEL_NAME, startSentinelCluster, type SentinelCluster } from './support/redis-sentinel-cluster';

const LIMIT = 120;
const json = { 'Content-Type': 'application/json' };

/**
 * Two gateways share their create limit through Redis behind three Sentinels; the primary is
 * SIGKILLed in the middle of a stream of creates. Documented (docs/gateway.md): never a 5xx, the
 * switch is answered from each gateway's memory (overshoot at most one limit per gateway), and the
 * counts continue on the new primary.
 */
describe('gateway limits on Redis with Sentinel, primary killed under load', () => {
  const notes = new TestUpstream('notes');
  const prefix = testPrefix('sentinel');
  const key = `${prefix}:create:${deriveClientKey(Buffer.from(TEST_LIMITER_KEY, 'base64'), '127.0.0.1')}`;
  let cluster: SentinelCluster;
  const gateways: RunningGateway[] = [];

  beforeAll(async () => {
    cluster = await startSentinelCluster();
    await notes.start();
    for (let i = 0; i < 2; i += 1) {
      gateways.push(await startGateway({
        REDIS_SENTINELS: cluster.sentinelList, REDIS_SENTINEL_NAME: SENTINEL_NAME,
        RATE_LIMIT_KEY_PREFIX: prefix, RATE_LIMIT_CREATE_PER_HOUR: String(LIMIT),
        NOTES_URL: notes.url, REDIS_COMMAND_TIMEOUT_MS: '300', REDIS_RETRY_INTERVAL_MS: '300',
      }));
    }
  }, 120_000);

  afterAll(async () => {
    for (const gw of gateways) await gw.stop();
    await notes.stop();
    await cluster?.stop();
  }, 60_000);

  const statuses: number[] = [];
  let turn = 0;
  const create = async (): Promise<number> => {
    const gw = gateways[turn++ % gateways.length]!;
    const answer = await send(`${gw.url}/api/create.php`, { method: 'POST', headers: json, body: '{"content":"x"}', timeoutMs: 10_000 });
    statuses.push(answer.status);
    return answer.status;
  };
  const storeUp = async (gw: RunningGateway): Promise<boolean> => {
    const text = (await send(`${gw.adminUrl}/metrics`)).text;
    return /^gateway_limiter_store_up(\{[^}]*\})? 1$/m.test(text);
  };
  const counter = async (): Promise<number> => {
    const client = cluster.client();
    try {
      return Number((await client.get(key)) ?? 0);
    } finally {
      client.disconnect();
    }
  };

  it('when the primary dies during creates through two gateways, then no 5xx, the count continues on the new primary, and the limit holds within the documented overshoot', async () => {
    for (let i = 0; i < 40; i += 1) expect(await create()).toBe(200);
    expect(await counter()).toBe(40);
    for (const gw of gateways) expect(await storeUp(gw)).toBe(true);

    const oldPrimary = await cluster.killPrimary();
    const killedAt = Date.now();
    // Creates keep coming (about 20 a second) until the Sentinels named a new primary and both gateways use it.
    await waitFor(async () => {
      await create();
      await new Promise((resolve) => setTimeout(resolve, 50));
      return (await cluster.primaryPort().catch(() => oldPrimary)) !== oldPrimary && (await storeUp(gateways[0]!)) && (await storeUp(gateways[1]!));
    }, { timeoutMs: 60_000, intervalMs: 0, description: 'a new primary in use by both gateways' });
    const switchedMs = Date.now() - killedAt;
    const afterSwitch = await counter();
    expect(afterSwitch).toBeGreaterThanOrEqual(40); // the replica had the counts

    // Now until both gateways refuse: the shared count on the new primary ends the window.
    await waitFor(async () => (await create()) === 429 && (await create()) === 429, { timeoutMs: 60_000, intervalMs: 0, description: 'the limit reached' });
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
    const granted = statuses.filter((s) => s === 200).length;
    expect(granted).toBeGreaterThanOrEqual(LIMIT);
    expect(granted).toBeLessThanOrEqual(LIMIT * (1 + gateways.length)); // docs/gateway.md: one limit per gateway at most
    expect(await counter()).toBeGreaterThanOrEqual(LIMIT);
    // Reported for docs/gateway.md (the measured switch); never asserted.
    process.stdout.write(`${JSON.stringify({ measured: 'redis sentinel switch', switchedMs, granted, overshoot: granted - LIMIT, requests: statuses.length })}\n`);

    await cluster.restartAsReplica(oldPrimary);
  }, 180_000);
});

import { deriveClientKey } from '@vanish/gateway';
import { waitFor } from '@vanish/testkit/net';
import { startGateway, testPrefix, TEST_LIMITER_KEY, type RunningGateway } from '../../../services/gateway/test/support/gateway-harness';
import { send } from '../../../services/gateway/test/support/http-client';
import { TestUpstream } from '../../../services/gateway/test/support/test-upstream';

const json = { 'Content-Type': 'application/json' };

/**
 * Two gateways sharing one create limit through a replicated Redis (Sentinel or Cluster), a trivial
 * notes upstream behind them, and one client whose creates alternate between the gateways: what the
 * failover tests of the limiter drive while they kill a Redis node.
 */
export interface LimitedGateways {
  readonly limit: number;
  readonly gateways: readonly RunningGateway[];
  /** The limiter's Redis key of the test client's creates. */
  readonly key: string;
  /** Every create's status, in order. */
  readonly statuses: number[];
  /** One create through the next gateway in turn; its status. */
  create(): Promise<number>;
  /** Every gateway reports its shared store up (gateway_limiter_store_up 1). */
  allStoresUp(): Promise<boolean>;
  /** The test client's create count as the store holds it now (through a client of its current primary). */
  sharedCount(): Promise<number>;
  /** Before a node is killed: `count` creates all granted, all counted in the store, every gateway on it. */
  expectSharedCount(count: number): Promise<void>;
  /**
   * The drill (after expectSharedCount): `kill` a node of the store, keep creating (about 20 a second)
   * until `switched` says a new primary serves the key and every gateway uses it, then create until both
   * gateways refuse. Holds the documented promise (docs/gateway.md): the count survived the switch, only
   * 200s and 429s (never a 5xx), at least the limit granted and at most one extra limit per gateway
   * (each answers the failover from its own memory). Prints the measured figures (never asserted).
   */
  failOver(measured: string, kill: () => Promise<unknown>, switched: () => Promise<boolean>): Promise<{ switchedMs: number }>;
  stop(): Promise<void>;
}

/** A client of the replicated Redis that reads a key from its current primary; the test disconnects it. */
export type StoreClientFactory = () => { get(key: string): Promise<string | null>; disconnect(): void };

export async function startLimitedGateways(name: string, limit: number, redisEnv: Record<string, string>, storeClient: StoreClientFactory): Promise<LimitedGateways> {
  const notes = new TestUpstream('notes');
  const prefix = testPrefix(name);
  const key = `${prefix}:create:${deriveClientKey(Buffer.from(TEST_LIMITER_KEY, 'base64'), '127.0.0.1')}`;
  const gateways: RunningGateway[] = [];
  const statuses: number[] = [];
  let slowestMs = 0;
  const stop = async (): Promise<void> => {
    for (const gw of gateways) await gw.stop();
    await notes.stop();
  };
  try {
    await notes.start();
    for (let i = 0; i < 2; i += 1) {
      gateways.push(await startGateway({
        ...redisEnv, RATE_LIMIT_KEY_PREFIX: prefix, RATE_LIMIT_CREATE_PER_HOUR: String(limit), NOTES_URL: notes.url,
        // A generous command timeout: on a loaded machine a slower answer must not be taken for a failure
        // before the kill (the counts would then miss creates answered from memory). A dead node fails
        // its commands at once, whatever this is.
        REDIS_COMMAND_TIMEOUT_MS: '1000', REDIS_RETRY_INTERVAL_MS: '300',
      }));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  let turn = 0;
  const create = async (): Promise<number> => {
    const gw = gateways[turn++ % gateways.length]!;
    const startedAt = Date.now();
    const answer = await send(`${gw.url}/api/create.php`, { method: 'POST', headers: json, body: '{"content":"x"}', timeoutMs: 10_000 });
    slowestMs = Math.max(slowestMs, Date.now() - startedAt);
    statuses.push(answer.status);
    return answer.status;
  };
  const storeUp = async (gw: RunningGateway): Promise<boolean> => /^gateway_limiter_store_up(\{[^}]*\})? 1$/m.test((await send(`${gw.adminUrl}/metrics`)).text);
  const allStoresUp = async (): Promise<boolean> => {
    for (const gw of gateways) if (!(await storeUp(gw))) return false;
    return true;
  };
  const sharedCount = async (): Promise<number> => {
    const client = storeClient();
    try {
      return Number((await client.get(key)) ?? 0);
    } finally {
      client.disconnect();
    }
  };
  return {
    limit, gateways, key, statuses, create, stop, allStoresUp, sharedCount,
    async expectSharedCount(count) {
      for (let i = 0; i < count; i += 1) expect(await create()).toBe(200);
      expect(await sharedCount()).toBe(count);
      expect(await allStoresUp()).toBe(true);
    },
    async failOver(measured, kill, switched) {
      const before = await sharedCount();
      await kill();
      const killedAt = Date.now();
      await waitFor(async () => {
        await create();
        await new Promise((resolve) => setTimeout(resolve, 50));
        return (await switched()) && (await allStoresUp());
      }, { timeoutMs: 60_000, intervalMs: 0, description: `${measured}: a new primary in use by every gateway` });
      const switchedMs = Date.now() - killedAt;
      expect(await sharedCount()).toBeGreaterThanOrEqual(before); // the replica had the counts

      // Now until both gateways refuse: the shared count on the new primary ends the window.
      await waitFor(async () => (await create()) === 429 && (await create()) === 429, { timeoutMs: 60_000, intervalMs: 0, description: 'the limit reached' });
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
      const granted = statuses.filter((s) => s === 200).length;
      expect(granted).toBeGreaterThanOrEqual(limit);
      expect(granted).toBeLessThanOrEqual(limit * (1 + gateways.length));
      expect(await sharedCount()).toBeGreaterThanOrEqual(limit);
      // Reported for docs/gateway.md and docs/testing.md (the measured switch).
      process.stdout.write(`${JSON.stringify({ measured, switchedMs, granted, overshoot: granted - limit, requests: statuses.length, slowestMs })}\n`);
      return { switchedMs };
    },
  };
}

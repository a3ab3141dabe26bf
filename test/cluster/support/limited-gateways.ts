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
  /** The slowest create's time to answer, in ms (reported: a failover must not make requests wait). */
  slowestMs(): number;
  /** One create through the next gateway in turn; its status. */
  create(): Promise<number>;
  /** Every gateway reports its shared store up (gateway_limiter_store_up 1). */
  allStoresUp(): Promise<boolean>;
  /** Creates until both gateways refuse in a row: the shared count on the store ended the window. */
  createUntilLimited(): Promise<void>;
  /**
   * The documented promise (docs/gateway.md): only 200s and 429s (never a 5xx), at least the limit
   * granted, and at most one extra limit per gateway (each answers a failover from its own memory).
   * Returns how many creates were granted.
   */
  expectLimitHeld(): number;
  stop(): Promise<void>;
}

export async function startLimitedGateways(name: string, limit: number, redisEnv: Record<string, string>): Promise<LimitedGateways> {
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
        REDIS_COMMAND_TIMEOUT_MS: '300', REDIS_RETRY_INTERVAL_MS: '300',
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
  return {
    limit, gateways, key, statuses, create, stop,
    slowestMs: () => slowestMs,
    async allStoresUp() {
      for (const gw of gateways) if (!(await storeUp(gw))) return false;
      return true;
    },
    async createUntilLimited() {
      await waitFor(async () => (await create()) === 429 && (await create()) === 429, { timeoutMs: 60_000, intervalMs: 0, description: 'the limit reached' });
    },
    expectLimitHeld() {
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);
      const granted = statuses.filter((s) => s === 200).length;
      expect(granted).toBeGreaterThanOrEqual(limit);
      expect(granted).toBeLessThanOrEqual(limit * (1 + gateways.length));
      return granted;
    },
  };
}

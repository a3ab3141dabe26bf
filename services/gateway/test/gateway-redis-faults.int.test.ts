import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';
import { deriveClientKey } from '../src';
import { startGateway, testPrefix, TEST_LIMITER_KEY, type RunningGateway } from './support/gateway-harness';
import { send } from './support/http-client';
import { deleteKeysWithPrefix, readCounter } from './support/redis-keys';
import { TestUpstream } from './support/test-upstream';

const json = { 'Content-Type': 'application/json' };

/** Redis cut (connections reset, new ones refused) and stalled (held, nothing answers). */
describe.each(['cut', 'stall'] as const)('gateway limits when Redis is %s', (fault) => {
  const notes = new TestUpstream('notes');
  const prefix = testPrefix(`fault-${fault}`);
  const key = `${prefix}:create:${deriveClientKey(Buffer.from(TEST_LIMITER_KEY, 'base64'), '127.0.0.1')}`;
  let proxy: FaultProxy;
  let gw: RunningGateway;

  const create = async (): Promise<{ status: number; ms: number }> => {
    const started = Date.now();
    const answer = await send(`${gw.url}/api/create.php`, { method: 'POST', headers: json, body: '{"content":"x"}', timeoutMs: 5000 });
    return { status: answer.status, ms: Date.now() - started };
  };

  const metric = async (name: string): Promise<number> => {
    const text = (await send(`${gw.adminUrl}/metrics`)).text;
    const lines = text.split('\n').filter((line) => line.startsWith(name));
    return lines.reduce((sum, line) => sum + Number(line.split(' ').pop()), 0);
  };

  beforeAll(async () => {
    await requireService('redis');
    await notes.start();
    proxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 6379 });
    gw = await startGateway({
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      RATE_LIMIT_KEY_PREFIX: prefix,
      NOTES_URL: notes.url,
      REDIS_COMMAND_TIMEOUT_MS: '150',
      REDIS_RETRY_INTERVAL_MS: '500',
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await proxy?.close();
    await notes.stop();
    await deleteKeysWithPrefix(prefix);
  });

  it(`when Redis is ${fault} and later back, then answers keep coming within 1 s, limited from memory, never 5xx, and Redis is used again`, async () => {
    // Healthy: three creates counted in Redis.
    for (let i = 0; i < 3; i += 1) expect((await create()).status).toBe(200);
    expect(await readCounter(key)).toBe(3);
    expect(await metric('gateway_limiter_store_up')).toBe(1);

    if (fault === 'cut') proxy.cut();
    else proxy.stall();

    // From memory: a fresh per-process window of 10, then 429; every answer fast, none 5xx.
    const during = [];
    for (let i = 0; i < 11; i += 1) during.push(await create());
    for (const answer of during) expect(answer.ms).toBeLessThan(1000);
    expect(during.map((answer) => answer.status)).toEqual([...Array(10).fill(200), 429]);
    expect(await metric('gateway_limiter_fallback_total')).toBeGreaterThanOrEqual(11);
    expect(await metric('gateway_limiter_store_up')).toBe(0);
    // The gateway stays ready: its readiness does not hang on Redis.
    expect((await send(`${gw.adminUrl}/readyz`)).status).toBe(200);

    proxy.restore();

    // Back on Redis: a request is counted there again and no longer answered from memory
    // (memory alone would refuse it: its window is spent).
    await waitFor(async () => {
      const before = await readCounter(key);
      const fallbacksBefore = await metric('gateway_limiter_fallback_total');
      const answer = await create();
      const after = await readCounter(key);
      const fallbacksAfter = await metric('gateway_limiter_fallback_total');
      return answer.status === 200 && before !== null && after === before + 1 && fallbacksAfter === fallbacksBefore;
    }, { timeoutMs: 10_000, intervalMs: 200, description: 'Redis used again after restore' });
    expect(await metric('gateway_limiter_store_up')).toBe(1);
  }, 30_000);
});

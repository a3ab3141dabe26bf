import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';
import { startGateway, testPrefix, type RunningGateway } from './support/gateway-harness';
import { send } from './support/http-client';
import { deleteKeysWithPrefix } from './support/redis-keys';
import { TestUpstream } from './support/test-upstream';

const OUTAGE_MS = 12_000;
const SUMMARY_EVERY_MS = 5_000;

/**
 * An outage is one event in the logs (issue 37), for Redis behind the gateway: cut for 12 s while
 * a loop of creates goes through. The limits fall back to memory (no request fails), so the outage
 * opens at warn, not error; then at most one summary per 5 s, and one info when Redis answers again.
 */
describe('gateway logs while Redis is cut under load', () => {
  const notes = new TestUpstream('notes');
  const prefix = testPrefix('outage-logs');
  let proxy: FaultProxy;
  let gw: RunningGateway;

  beforeAll(async () => {
    await requireService('redis');
    await notes.start();
    proxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 6379 });
    gw = await startGateway({
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`, RATE_LIMIT_KEY_PREFIX: prefix, NOTES_URL: notes.url,
      RATE_LIMIT_CREATE_PER_HOUR: '1000000', REDIS_COMMAND_TIMEOUT_MS: '150', REDIS_RETRY_INTERVAL_MS: '500',
    });
  });

  afterAll(async () => {
    await gw?.stop();
    await proxy?.close();
    await notes.stop();
    await deleteKeysWithPrefix(prefix);
  });

  it('when Redis is cut for 12 s under load, then one warn when it goes, at most a summary per 5 s, one info when it is back, no error', async () => {
    const create = () => send(`${gw.url}/api/create.php`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"content":"x"}', timeoutMs: 5000 });
    expect((await create()).status).toBe(200);
    const from = gw.logs.lines.length;
    let requests = 0;
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        expect((await create()).status).toBe(200);
        requests += 1;
      }
    })();
    proxy.cut();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    proxy.restore();
    await waitFor(() => gw.logs.lines.slice(from).some((line) => line.includes('"redis reachable again"')), { timeoutMs: 15_000, description: 'redis reachable again' });
    stopped = true;
    await loop;

    const lines = gw.logs.entries().slice(from) as Array<{ level: string; msg: string }>;
    const notable = lines.filter((line) => line.level === 'warn' || line.level === 'error' || (line.level === 'info' && /redis/.test(line.msg)));
    const summaries = notable.filter((line) => /^redis still unreachable: [\d,]+ limit decisions answered from memory in the last [\d.]+ s$/.test(line.msg));
    const report = notable.map((line) => `${line.level} ${line.msg}`);
    expect(requests).toBeGreaterThan(100);
    expect({ errors: notable.filter((line) => line.level === 'error'), report }).toEqual({ errors: [], report });
    expect(notable.filter((line) => line.msg === 'redis unreachable').map((line) => line.level)).toEqual(['warn']);
    expect(notable.filter((line) => line.msg === 'redis reachable again')).toHaveLength(1);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(summaries.length).toBeLessThanOrEqual(Math.ceil(OUTAGE_MS / SUMMARY_EVERY_MS) + 1);
    // The rest are the connection's own lines: each distinct error once, and one when it is ready again.
    expect(notable.length).toBeLessThanOrEqual(summaries.length + 8);
  }, 60_000);
});

import { gatewayInFrontOfUpstreams, until, type RunningGateway } from './support/gateway-harness';
import { send, type Answer } from './support/http-client';

/**
 * GETs of /api/stats.php share upstream reads (docs/gateway.md, Shared reads): in-process gateway
 * on port 0, real upstream servers on real ports; the limiter is the gateway's in-memory one.
 */

const STATS = '/api/stats.php';

function expectApiError(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.json()).toEqual({ error: expect.any(String), code, details: { parameter: null, message: expect.any(String) } });
  expect(answer.headers['api-version']).toBe('1.2.0');
  expect(answer.headers['cache-control']).toBe('no-store');
}

function joinsCounted(metrics: string): number {
  const line = metrics.split('\n').find((row) => /^gateway_shared_read_joins_total\{[^}]*upstream="stats"/.test(row));
  return line ? Number(line.split(' ').pop()) : 0;
}

/** Upstreams on their own ports and a gateway in front of them, for one describe block. */
function statsBehindGateway(timeoutMs: number): ReturnType<typeof gatewayInFrontOfUpstreams> {
  return gatewayInFrontOfUpstreams({ UPSTREAM_TIMEOUT_MS: String(timeoutMs), RATE_LIMIT_STATS_PER_HOUR: '1000', RATE_LIMIT_VIEW_PER_HOUR: '1000' });
}

describe('gateway: concurrent GETs of the statistics share upstream reads', () => {
  // Above twice the slow upstream's 400 ms: a client who arrives while a read is under way waits for it and the next.
  const { upstreams: { stats }, gateway } = statsBehindGateway(1500);
  let gw: RunningGateway;

  beforeEach(() => {
    gw = gateway();
    stats.mode = 'ok';
    stats.seen.length = 0;
  });

  it('when clients ask while a read is under way, then they share the next read, each with its own request id, limits and headers, and none gets an answer read before it asked', async () => {
    stats.mode = 'slow';
    const joinsBefore = joinsCounted((await send(`${gw.adminUrl}/metrics`)).text);
    const first = send(`${gw.url}${STATS}`, { headers: { 'X-Request-Id': 'shared-read-first' } });
    await until(() => stats.seen.length === 1, 'the first read reached the upstream');
    const later = await Promise.all(
      Array.from({ length: 8 }, (_, index) => send(`${gw.url}${STATS}`, { headers: { 'X-Request-Id': `shared-read-later-${index}` } })),
    );
    const firstAnswer = await first;

    // One read for the first client, one for the eight who came while it was under way.
    expect(stats.seen).toHaveLength(2);
    expect(firstAnswer.json()).toEqual({ upstream: 'stats', slow: true, sequence: 1 });
    const remaining = new Set<string>();
    for (const [index, answer] of later.entries()) {
      expect(answer.status).toBe(200);
      expect(answer.json()).toEqual({ upstream: 'stats', slow: true, sequence: 2 });
      expect(answer.headers['x-request-id']).toBe(`shared-read-later-${index}`);
      expect(answer.headers['api-version']).toBe('1.2.0');
      expect(answer.headers['cache-control']).toBe('no-store');
      expect(answer.headers['x-powered-by']).toBeUndefined();
      remaining.add(String(answer.headers['ratelimit-remaining']));
    }
    // Every client was counted against its limit on its own.
    expect(remaining.size).toBe(8);
    // The eight shared one read: the first of them asked for it, seven joined.
    expect(joinsCounted((await send(`${gw.adminUrl}/metrics`)).text) - joinsBefore).toBe(7);
  });

  it('when one client at a time asks, then each request is its own read', async () => {
    for (let round = 0; round < 3; round += 1) expect((await send(`${gw.url}${STATS}`)).status).toBe(200);
    expect(stats.seen).toHaveLength(3);
  });

  it('when a GET carries a query string, then it is relayed on its own and not shared', async () => {
    stats.mode = 'slow';
    const first = send(`${gw.url}${STATS}?a=1`);
    await until(() => stats.seen.length === 1, 'the first read reached the upstream');
    const later = await Promise.all(Array.from({ length: 3 }, () => send(`${gw.url}${STATS}?a=1`)));
    for (const answer of [await first, ...later]) expect(answer.status).toBe(200);
    expect(stats.seen.map((seen) => seen.url)).toEqual(Array(4).fill(`${STATS}?a=1`));
  });

  it('when HEAD is sent, then it is relayed on its own and not shared', async () => {
    const answers = await Promise.all([send(`${gw.url}${STATS}`, { method: 'HEAD' }), send(`${gw.url}${STATS}`, { method: 'HEAD' })]);
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(stats.seen.map((seen) => seen.method)).toEqual(['HEAD', 'HEAD']);
  });

  it('when the shared read does not answer in time, then every waiting client gets 504 within the timeout, and the next request is answered', async () => {
    stats.mode = 'hang';
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: 5 }, () => send(`${gw.url}${STATS}`, { timeoutMs: 8000 })));
    expect(Date.now() - started).toBeLessThan(5000);
    for (const answer of answers) expectApiError(answer, 504, 'UPSTREAM_TIMEOUT');
    stats.mode = 'ok';
    expect((await send(`${gw.url}${STATS}`)).status).toBe(200);
  });

  it('when the upstream answers a 5xx in our shape, then every waiting client gets it with its Retry-After; an HTML 5xx is replaced for each', async () => {
    stats.mode = 'shaped-503';
    for (const answer of await Promise.all(Array.from({ length: 4 }, () => send(`${gw.url}${STATS}`)))) {
      expectApiError(answer, 503, 'SERVICE_UNAVAILABLE');
      expect(answer.headers['retry-after']).toBe('7');
    }
    stats.mode = 'html-500';
    for (const answer of await Promise.all(Array.from({ length: 4 }, () => send(`${gw.url}${STATS}`)))) {
      expectApiError(answer, 500, 'INTERNAL_ERROR');
      expect(answer.text).not.toContain('secret.js');
    }
  });

  it('when the upstream is stopped, then every waiting client gets 502; started again, reads are shared again', async () => {
    await stats.stop();
    try {
      for (const answer of await Promise.all(Array.from({ length: 4 }, () => send(`${gw.url}${STATS}`, { timeoutMs: 5000 })))) {
        expectApiError(answer, 502, 'UPSTREAM_UNAVAILABLE');
      }
    } finally {
      await stats.start();
    }
    expect((await send(`${gw.url}${STATS}`)).status).toBe(200);
  });

  it('when a waiting client goes away, then the others sharing its read are still answered', async () => {
    stats.mode = 'slow';
    const first = send(`${gw.url}${STATS}`);
    await until(() => stats.seen.length === 1, 'the first read reached the upstream');
    const leaving = send(`${gw.url}${STATS}`, { timeoutMs: 50 });
    const staying = [send(`${gw.url}${STATS}`), send(`${gw.url}${STATS}`)];
    await expect(leaving).rejects.toThrow(/no answer/);
    expect((await first).status).toBe(200);
    for (const answer of await Promise.all(staying)) expect(answer.json()).toMatchObject({ sequence: 2 });
  });
});

describe('gateway: a shared read that nobody waits for any more', () => {
  // A deadline far beyond the test: a cancelled upstream request can only be the clients' doing.
  const { upstreams: { stats }, gateway } = statsBehindGateway(60_000);

  it('when every client waiting for a read has gone, then its upstream request is cancelled, and the next client gets a read of its own', async () => {
    const gw = gateway();
    stats.mode = 'hang';
    const leaving = [send(`${gw.url}${STATS}`, { timeoutMs: 100 }), send(`${gw.url}${STATS}`, { timeoutMs: 100 })];
    for (const gone of leaving) await expect(gone).rejects.toThrow(/no answer/);
    // One read, or two when the second client came while the first's was under way: each cancelled.
    await until(() => stats.seen.length >= 1 && stats.abandoned === stats.seen.length, 'the upstream saw every request of the gone clients cancelled');
    const readsOfTheGone = stats.seen.length;
    expect(readsOfTheGone).toBeLessThanOrEqual(2);
    stats.mode = 'ok';
    expect((await send(`${gw.url}${STATS}`)).status).toBe(200);
    expect(stats.seen).toHaveLength(readsOfTheGone + 1);
  });
});

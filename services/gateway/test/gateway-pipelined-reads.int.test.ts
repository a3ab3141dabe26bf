import { gatewayInFrontOfUpstreams, until, type RunningGateway } from './support/gateway-harness';
import { send, type Answer } from './support/http-client';
import type { TestUpstream } from './support/test-upstream';

/**
 * The reads that change nothing upstream (route-table.ts `repeatableRead`) travel on connections that carry
 * several at once (UPSTREAM_PIPELINING; docs/gateway.md): in-process gateway on port 0, a real HTTP server
 * on a real port as notes, counting the connections it accepts; the limiter is the gateway's in-memory one.
 */

const READ = '/api/view/0b6f4a1e-6c1d-4f1e-9a3b-2f6d8c9e0a11.php';
const PAGE = '/0b6f4a1e-6c1d-4f1e-9a3b-2f6d8c9e0a11';

/** Sends one read and waits until notes holds it (the slow mode answers after 400 ms): its connection is busy, not idle. */
async function oneReadInFlight(gw: RunningGateway, notes: TestUpstream): Promise<{ answer: Promise<Answer>; connection: number | undefined }> {
  const before = notes.seen.length;
  const answer = send(`${gw.url}${READ}`);
  await until(() => notes.seen.length > before, 'the read reached notes');
  return { answer, connection: notes.seen[before]!.connection };
}

describe('gateway: the API reads pipelined to their upstream (UPSTREAM_PIPELINING=8)', () => {
  const { upstreams: { notes }, gateway } = gatewayInFrontOfUpstreams({ RATE_LIMIT_VIEW_PER_HOUR: '1000', UPSTREAM_PIPELINING: '8' });
  let gw: RunningGateway;

  beforeEach(() => {
    gw = gateway();
    notes.mode = 'slow';
    notes.seen.length = 0;
  });

  it('when clients read while a read is in flight, then their reads join it on its upstream connection, and each client gets its own answer', async () => {
    const first = await oneReadInFlight(gw, notes);
    const started = Date.now();
    const more = Array.from({ length: 7 }, () => send(`${gw.url}${READ}`));
    const answers = await Promise.all([first.answer, ...more]);
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(new Set(answers.map((answer) => answer.headers['x-request-id'])).size).toBe(8);
    expect(notes.seen).toHaveLength(8);
    expect(new Set(notes.seen.map((seen) => seen.connection))).toEqual(new Set([first.connection]));
    // Notes answers each after 400 ms: one at a time on that connection, the seven would take 2.8 s.
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("when a pipelined read's client goes away, then the reads beside it on that connection are sent again and answered", async () => {
    const staying = [await oneReadInFlight(gw, notes)];
    staying.push(await oneReadInFlight(gw, notes));
    expect(staying[1]!.connection).toBe(staying[0]!.connection);
    const leaving = send(`${gw.url}${READ}`, { timeoutMs: 150 });
    await until(() => notes.seen.length === 3, 'the third read reached notes');
    await expect(leaving).rejects.toThrow(/no answer/);
    for (const { answer } of staying) expect((await answer).status).toBe(200);
    // Cancelling a read already sent closes its connection: the two others were sent again on a new one.
    expect(notes.seen).toHaveLength(5);
    expect(notes.seen[3]!.connection).not.toBe(staying[0]!.connection);
  });

  it('when note pages are fetched while a read is in flight, then each page goes on a connection of its own: a page fetch is recorded, never sent twice', async () => {
    const read = await oneReadInFlight(gw, notes);
    const answers = await Promise.all(Array.from({ length: 4 }, () => send(`${gw.url}${PAGE}`)));
    for (const answer of answers) expect(answer.status).toBe(200);
    const pages = notes.seen.filter((seen) => seen.url === PAGE).map((seen) => seen.connection);
    expect(new Set(pages).size).toBe(4);
    expect(pages).not.toContain(read.connection);
    expect((await read.answer).status).toBe(200);
  });

  it('when notes are created while a read is in flight, then no create goes behind it on its connection', async () => {
    const read = await oneReadInFlight(gw, notes);
    const body = JSON.stringify({ text: 'x', expiry: '1h' });
    const answers = await Promise.all(Array.from({ length: 3 }, () => send(`${gw.url}/api/create.php`, {
      method: 'POST', body, headers: { 'Content-Type': 'application/json' },
    })));
    for (const answer of answers) expect(answer.status).toBe(200);
    const creates = notes.seen.filter((seen) => seen.method === 'POST').map((seen) => seen.connection);
    expect(creates).toHaveLength(3);
    expect(creates).not.toContain(read.connection);
    expect((await read.answer).status).toBe(200);
  });
});

describe('gateway: reads not pipelined (UPSTREAM_PIPELINING=1)', () => {
  const { upstreams: { notes }, gateway } = gatewayInFrontOfUpstreams({ RATE_LIMIT_VIEW_PER_HOUR: '1000', UPSTREAM_PIPELINING: '1' });

  it('when clients read while a read is in flight, then each read has an upstream connection of its own', async () => {
    const gw = gateway();
    notes.mode = 'slow';
    const first = await oneReadInFlight(gw, notes);
    const answers = await Promise.all([first.answer, ...Array.from({ length: 7 }, () => send(`${gw.url}${READ}`))]);
    for (const answer of answers) expect(answer.status).toBe(200);
    expect(new Set(notes.seen.map((seen) => seen.connection)).size).toBe(8);
  });
});

import { parseJsonLines } from '@vanish/testkit/strict-json';
import { background, sleep, startSystem, type System } from './support/system';

// An outage is one event in the logs (issue 37): the database behind notes is cut for 15 s while
// a load loop keeps creating, reading and opening note pages through the gateway; notes' log must
// tell it as one error when it goes, bounded summaries, one info when it is back. And the note
// page's own 503 passes the gateway unchanged, with no warning. (Needs `npm run build`.)
const OUTAGE_MS = 15_000;
const SUMMARY_EVERY_MS = 5_000;

jest.setTimeout(300_000);

type LogLine = { level: string; msg: string; [field: string]: unknown };

/** The JSON lines a process wrote after `from` characters of its output. */
function linesAfter(output: string, from: number): LogLine[] {
  const text = output.slice(from);
  return parseJsonLines(text.split('\n').filter((line) => line.startsWith('{')).join('\n')) as LogLine[];
}

describe('outage logs: a dependency that goes away is one event in the log', () => {
  let sys: System;
  let uuid: string;
  beforeAll(async () => {
    sys = await startSystem();
    uuid = (await sys.create({ content: 'read while the database is away', max_views: 100 })).body.uuid as string;
  }, 300_000);
  afterAll(async () => {
    await sys?.stop();
  });

  it('when the database is down, then the note page\'s 503 passes the gateway unchanged and the gateway warns about nothing', async () => {
    const gatewayFrom = sys.processes.gateway.output().length;
    const browser = { accept: 'text/html,application/xhtml+xml', 'accept-language': 'de' };
    sys.allow5xx = true;
    sys.proxies.notesDb.cut();
    try {
      const through = await sys.raw('GET', `/${uuid}`, { headers: browser });
      const direct = await fetch(`http://127.0.0.1:${sys.serviceEnv('notes').PORT}/${uuid}`, { headers: browser });
      const directText = await direct.text();
      expect(direct.status).toBe(503);
      expect(through.status).toBe(503);
      expect(through.headers.get('content-type')).toMatch(/^text\/html/);
      // The page notes wrote, in the reader's language, byte for byte: not the gateway's replacement.
      expect(through.text).toBe(directText);
      expect(through.headers.get('retry-after')).toBe(direct.headers.get('retry-after'));
      expect(JSON.parse(through.headers.get('vanish-error') ?? 'null')).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { parameter: null } });
      // A client that asks for JSON on the same path gets the error shape.
      const json = await sys.raw('GET', `/${uuid}`, { headers: { accept: 'application/json' } });
      expect(json.status).toBe(503);
      expect(json.body).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE', details: { parameter: null, message: expect.any(String) } });
    } finally {
      sys.proxies.notesDb.restore();
    }
    await sleep(200);
    const gatewayLines = linesAfter(sys.processes.gateway.output(), gatewayFrom);
    expect(gatewayLines.filter((line) => /error shape|upstream/.test(line.msg))).toEqual([]);
    await waitForNotes(sys, uuid);
    sys.allow5xx = false;
  });

  it('when the database is cut for 15 s under load, then notes logs one error when it goes, one info when it is back and at most a summary per 5 s between', async () => {
    await waitForNotes(sys, uuid);
    const notesFrom = sys.processes.notes.output().length;
    const statuses = new Map<number, number>();
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    // Three of each kind at once: API reads, note pages, creates.
    const loops = [1, 2, 3].flatMap(() => [
      background(async () => count((await sys.raw('GET', `/api/view/${uuid}.php`)).status), 0),
      background(async () => count((await sys.raw('GET', `/${uuid}`, { headers: { accept: 'text/html' } })).status), 0),
      background(async () => count((await sys.api('POST', '/api/create.php', { content: 'during the outage' })).status), 0),
    ]);
    await sleep(1_000);
    sys.allow5xx = true;
    sys.proxies.notesDb.cut();
    await sleep(OUTAGE_MS);
    sys.proxies.notesDb.restore();
    await waitForNotes(sys, uuid);
    await sleep(1_000);
    for (const loop of loops) await loop.stop();
    sys.allow5xx = false;

    const lines = linesAfter(sys.processes.notes.output(), notesFrom);
    const byLevel = (level: string) => lines.filter((line) => line.level === level);
    const failed = statuses.get(503) ?? 0;
    const summaries = byLevel('warn').filter((line) => /^database still unreachable: [\d,]+ requests failed in the last [\d.]+ s$/.test(line.msg));
    const report = JSON.stringify({ statuses: Object.fromEntries(statuses), lines: lines.filter((line) => line.category !== 'notes/access').map((line) => `${String(line.time)} ${line.level} ${line.msg}${line.level === 'warn' && line.detail ? ` (${String(line.detail).slice(0, 80)})` : ''}`) }, null, 1);
    // The figures for docs/operations.md: answers by status and every line notes wrote at info or above.
    process.stdout.write(`${report}\n`);
    expect({ failed: failed > 30, report }).toEqual({ failed: true, report }); // the load was real: many more requests failed than lines were written
    expect(byLevel('error').map((line) => line.msg)).toEqual(['database unreachable']);
    expect(byLevel('info').filter((line) => line.msg === 'database reachable again')).toHaveLength(1);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    expect(summaries.length).toBeLessThanOrEqual(Math.ceil(OUTAGE_MS / SUMMARY_EVERY_MS) + 1);
    // Nothing else per request: besides the summaries, a worker's once-per-streak line and the driver's
    // line for each pooled connection the cut broke (at most the pool's 10 and the relay's 2).
    const others = byLevel('warn').filter((line) => !summaries.includes(line));
    expect({ others: others.length <= 13, report }).toEqual({ others: true, report });
    expect(lines.filter((line) => /request failed|page failed|not recorded/.test(line.msg))).toEqual([]);
    const back = byLevel('info').find((line) => line.msg === 'database reachable again')!;
    expect(Number(back.failed)).toBeGreaterThanOrEqual(failed * 0.9);
    expect(Number(back.downForMs)).toBeGreaterThan(OUTAGE_MS - 2_000);
    // The per-request count is in the metrics.
    const metrics = await (await fetch(`${sys.adminUrl.notes}/metrics`)).text();
    expect(Number(/notes_dependency_failures_total\{[^}]*dependency="database"[^}]*\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(failed);
  });
});

async function waitForNotes(sys: System, uuid: string): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if ((await sys.raw('GET', `/api/view/${uuid}.php`)).status === 200) return;
    await sleep(200);
  }
  throw new Error('notes did not answer 200 again after the database came back');
}

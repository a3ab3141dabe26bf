import { parseJsonLines } from '@vanish/testkit/strict-json';
import { waitFor } from '@vanish/testkit/net';
import { background, sleep, startSystem, type System } from './support/system';

// An outage is one event in the logs (issue 37): the database behind notes is cut for 15 s while
// a load loop keeps creating, reading and opening note pages through the gateway; notes' log must
// tell it as one error when it goes, bounded summaries, one info when it is back. And the note
// page's own 503 passes the gateway unchanged, with no warning. The same, under load, for RabbitMQ
// in the four services that use it, and for the mailer's database and SMTP server; and nothing is
// lost, counted twice or mailed twice after. (Needs `npm run build`.)
const OUTAGE_MS = 15_000;
const SUMMARY_EVERY_MS = 5_000;
/** The broker's and the mailer's outages: two summaries' worth, enough to show they are bounded. */
const SHORT_OUTAGE_MS = 10_000;

jest.setTimeout(300_000);

type LogLine = { level: string; msg: string; [field: string]: unknown };

/** The JSON lines a process wrote after `from` characters of its output. */
function linesAfter(output: string, from: number): LogLine[] {
  const text = output.slice(from);
  return parseJsonLines(text.split('\n').filter((line) => line.startsWith('{')).join('\n')) as LogLine[];
}

/** What a service wrote about one dependency's outage, from its log lines at info and above. */
function outageLines(lines: LogLine[], dependency: string) {
  const summary = new RegExp(`^${dependency} still unreachable: [\\d,]+ [a-z ]+ in the last [\\d.]+ s$`);
  const visible = lines.filter((line) => line.level !== 'debug' && line.category !== 'notes/access');
  return {
    errors: visible.filter((line) => line.level === 'error').map((line) => line.msg),
    back: visible.filter((line) => line.level === 'info' && line.msg === `${dependency} reachable again`),
    summaries: visible.filter((line) => line.level === 'warn' && summary.test(line.msg)),
    others: visible.filter((line) => line.level === 'warn' && !summary.test(line.msg)).map((line) => line.msg),
    all: visible.map((line) => `${String(line.time)} ${line.level} ${line.msg}`),
  };
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

  /**
   * Load that uses every consumer: creates through the gateway (one in three asks for a link e-mail,
   * to an address of its own) and reveals (note events to stats and webhooks). Counts answers by status.
   */
  function mailingLoad(label: string) {
    const statuses = new Map<number, number>();
    let mails = 0;
    let n = 0;
    const loops = [1, 2, 3].map((lane) => background(async () => {
      const i = n++;
      const email = i % 3 === 0 ? { send_link_email: `${label}.${lane}.${i}@example.com` } : {};
      const created = await sys.create({ content: `${label} ${i}`, max_views: 2, ...email });
      statuses.set(created.status, (statuses.get(created.status) ?? 0) + 1);
      if (created.status !== 200) return;
      if ('send_link_email' in email) mails += 1;
      await sys.reveal(created.body.uuid as string);
    }, 50));
    return {
      statuses,
      get mails() { return mails; },
      async stop() { for (const loop of loops) await loop.stop(); },
    };
  }

  /**
   * Every e-mail asked for arrives, each Message-ID once (a failure lists the copies). `inFlightAtCut`:
   * when the SMTP server itself is cut, a message it had taken while the cut dropped the connection
   * before its 250 was read is sent again (SMTP is at-least-once; the repeat has the same Message-ID).
   */
  async function expectMailedOnce(from: number, expected: number, inFlightAtCut = 0) {
    await sys.sink.waitForMessages(from + expected, 60_000);
    await sleep(1_500);
    const copies = new Map<string, number>();
    for (const message of sys.sink.messages.slice(from)) copies.set(String(message.parsed.messageId), (copies.get(String(message.parsed.messageId)) ?? 0) + 1);
    const twice = [...copies].filter(([, count]) => count > 1);
    expect({ distinct: copies.size, twice: twice.length <= inFlightAtCut ? [] : twice }).toEqual({ distinct: expected, twice: [] });
  }

  it('when RabbitMQ is cut for 10 s under load, then notes, stats, the mailer and webhooks each log one error when it goes and one info when it is back, and everything arrives once after', async () => {
    await waitForNotes(sys, uuid);
    const services = ['notes', 'stats', 'mailer', 'webhooks'] as const;
    const marks = Object.fromEntries(services.map((service) => [service, sys.processes[service].output().length])) as Record<(typeof services)[number], number>;
    const mailedBefore = sys.sink.messages.length;
    const load = mailingLoad('broker');
    await sleep(1_000);
    sys.proxies.amqp.cut();
    await sleep(SHORT_OUTAGE_MS);
    sys.proxies.amqp.restore();
    // Each service's reconnect backoff (up to 10 s) decides when it is back.
    for (const service of services) {
      await waitFor(() => /"msg":"rabbitmq reachable again"/.test(sys.processes[service].output().slice(marks[service])), { timeoutMs: 30_000, description: `${service} back on RabbitMQ` });
    }
    await sleep(1_000);
    await load.stop();
    expect([...load.statuses.keys()]).toEqual([200]); // the outbox holds what the broker cannot take: no create fails
    await sys.checkInvariants();
    await expectMailedOnce(mailedBefore, load.mails);

    const report: Record<string, unknown> = {};
    for (const service of services) {
      const told = outageLines(linesAfter(sys.processes[service].output(), marks[service]), 'rabbitmq');
      report[service] = told.all;
      expect({ service, errors: told.errors }).toEqual({ service, errors: ['rabbitmq unreachable'] });
      expect({ service, back: told.back.length }).toEqual({ service, back: 1 });
      expect(told.summaries.length).toBeLessThanOrEqual(Math.ceil(25_000 / SUMMARY_EVERY_MS) + 1);
      // Besides the summaries: the lost connection's warn, a worker's once-per-streak line (heartbeats, the relay).
      expect({ service, others: told.others.filter((msg) => !/^(lost the RabbitMQ connection; reconnecting|heartbeat not published|outbox relay round failed; rows stay in the outbox)$/.test(msg)), lines: told.all }).toEqual({ service, others: [], lines: told.all });
      expect(Number(told.back[0]!.failed)).toBeGreaterThanOrEqual(1);
    }
    process.stdout.write(`${JSON.stringify({ broker: { creates: Object.fromEntries(load.statuses), mails: load.mails, lines: report } }, null, 1)}\n`);
    const metrics = await (await fetch(`${sys.adminUrl.mailer}/metrics`)).text();
    expect(Number(/mailer_dependency_failures_total\{[^}]*dependency="rabbitmq"[^}]*\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
  });

  it('when the mailer\'s database is cut for 10 s while link e-mails are asked for, then the mailer logs one error and one info, its unsubscribe page answers 503 through the gateway, and every e-mail goes out once after', async () => {
    await waitForNotes(sys, uuid);
    // A link e-mail of before the cut, for its unsubscribe token.
    const linked = sys.sink.messages.length;
    expect((await sys.create({ content: 'unsubscribe link', send_link_email: 'unsubscriber@example.com' })).status).toBe(200);
    const token = /\/unsubscribe\/(u1\.[^>\s"]+)/.exec((await sys.sink.waitForMessages(linked + 1, 30_000)).at(-1)?.parsed.text ?? '')?.[1];
    const mark = sys.processes.mailer.output().length;
    const gatewayMark = sys.processes.gateway.output().length;
    const mailedBefore = sys.sink.messages.length;
    const load = mailingLoad('mailerdb');
    await sleep(1_000);
    sys.proxies.mailerDb.cut();
    sys.allow5xx = true;
    await sleep(2_000);
    const unsubscribe = await sys.raw('POST', '/unsubscribe/u1.AAAA.AAAA', { headers: { accept: 'application/json' } }); // not a token of ours: 404 either way
    const refused = token ? await sys.raw('POST', `/unsubscribe/${token}`, { headers: { accept: 'application/json' } }) : undefined;
    await sleep(SHORT_OUTAGE_MS - 2_000);
    sys.proxies.mailerDb.restore();
    await waitFor(() => /"msg":"database reachable again"/.test(sys.processes.mailer.output().slice(mark)), { timeoutMs: 30_000, description: 'the mailer back on its database' });
    await sleep(1_000);
    await load.stop();
    sys.allow5xx = false;
    expect(unsubscribe.status).toBe(404);
    expect(token).toBeDefined();
    expect(refused?.status).toBe(503);
    expect(refused?.body).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE', details: { parameter: null, message: expect.any(String) } });
    expect(linesAfter(sys.processes.gateway.output(), gatewayMark).filter((line) => /error shape|upstream/.test(line.msg))).toEqual([]);
    expect([...load.statuses.keys()]).toEqual([200]);
    await sys.checkInvariants();
    await expectMailedOnce(mailedBefore, load.mails);

    const told = outageLines(linesAfter(sys.processes.mailer.output(), mark), 'database');
    process.stdout.write(`${JSON.stringify({ mailerDatabase: { creates: Object.fromEntries(load.statuses), mails: load.mails, lines: told.all } }, null, 1)}\n`);
    expect(told.errors).toEqual(['database unreachable']);
    expect(told.back).toHaveLength(1);
    expect(told.summaries.length).toBeGreaterThanOrEqual(1);
    expect(told.summaries.length).toBeLessThanOrEqual(Math.ceil(SHORT_OUTAGE_MS / SUMMARY_EVERY_MS) + 2);
    // Besides the summaries, the driver's line for each pooled connection the cut broke (at most the pool's 10).
    expect({ others: told.others.filter((msg) => !/^database driver (warning|error)$/.test(msg)), lines: told.all }).toEqual({ others: [], lines: told.all });
    expect(told.others.length).toBeLessThanOrEqual(10);
    expect(Number(told.back[0]!.failed)).toBeGreaterThan(told.all.length);
  });

  it('when the SMTP server is down for 10 s while link e-mails are asked for, then the mailer logs one error and one info, not a line per e-mail, and every e-mail arrives once after', async () => {
    await waitForNotes(sys, uuid);
    const mark = sys.processes.mailer.output().length;
    const mailedBefore = sys.sink.messages.length;
    const load = mailingLoad('smtp');
    await sleep(1_000);
    sys.sink.goDown();
    await sleep(SHORT_OUTAGE_MS);
    sys.sink.comeBack();
    await waitFor(() => /"msg":"smtp reachable again"/.test(sys.processes.mailer.output().slice(mark)), { timeoutMs: 30_000, description: 'the mailer sending again' });
    await sleep(1_000);
    await load.stop();
    expect([...load.statuses.keys()]).toEqual([200]);
    await sys.checkInvariants();
    await expectMailedOnce(mailedBefore, load.mails, 3); // at most one send per load lane was in flight at the cut

    const told = outageLines(linesAfter(sys.processes.mailer.output(), mark), 'smtp');
    process.stdout.write(`${JSON.stringify({ smtp: { creates: Object.fromEntries(load.statuses), mails: load.mails, lines: told.all } }, null, 1)}\n`);
    expect(told.errors).toEqual(['smtp unreachable']);
    expect(told.back).toHaveLength(1);
    expect(told.summaries.length).toBeLessThanOrEqual(Math.ceil(SHORT_OUTAGE_MS / SUMMARY_EVERY_MS) + 2);
    expect({ others: told.others, lines: told.all }).toEqual({ others: [], lines: told.all });
    expect(Number(told.back[0]!.failed)).toBeGreaterThanOrEqual(load.mails > 3 ? 3 : 1);
  });
});

async function waitForNotes(sys: System, uuid: string): Promise<void> {
  for (let i = 0; i < 100; i += 1) {
    if ((await sys.raw('GET', `/api/view/${uuid}.php`)).status === 200) return;
    await sleep(200);
  }
  throw new Error('notes did not answer 200 again after the database came back');
}

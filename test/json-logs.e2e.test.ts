import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { freePort, waitFor } from '@vanish/testkit/net';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { deleteRabbitObjects } from '@vanish/testkit/rabbitmq';
import { requireService } from '@vanish/testkit/services';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { parseJsonLines } from '@vanish/testkit/strict-json';
import { CLEARED_ENV, testKey } from './support/api-client';

// Started fresh, driven, stopped with SIGTERM: every line a process writes, on stdout and on stderr,
// is one JSON object that parses strictly (no key twice, no bare text), and its last line is `stopped`.
// The all-in-one process on its embedded defaults, then the four services as separate processes on
// the machine's MariaDB, RabbitMQ and Redis. Needs `npm run build` first (npm test does).
const ROOT = path.resolve(__dirname, '..');
const ALL_IN_ONE = path.join(ROOT, 'services', 'all-in-one', 'dist', 'main.js');
const mainOf = (service: string) => path.join(ROOT, 'services', service, 'dist', 'main.js');

jest.setTimeout(180_000);

interface Traffic { uuids: string[] }

/** Sent as X-Request-Id: shaped like a note id, it must be replaced, never logged. */
const NOTE_SHAPED_REQUEST_ID = '3f2c8a1e-9b7d-4c2e-8f10-5a6b7c8d9e0f';

/** A few requests of every kind through the gateway: creates (with mail), metadata, the note page and its form, stats, errors. */
async function driveTraffic(gateway: string): Promise<Traffic> {
  const uuids: string[] = [];
  const post = (body: unknown, headers: Record<string, string> = {}) => fetch(`${gateway}/api/create.php`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body), signal: AbortSignal.timeout(15_000),
  });
  const get = (pathname: string, headers: Record<string, string> = {}) => fetch(`${gateway}${pathname}`, { headers, signal: AbortSignal.timeout(15_000) });

  for (const body of [
    { content: 'plain' },
    { content: 'with a passcode', passcode: 'open sesame', max_views: 2 },
    { content: 'with mail', send_link_email: 'friend@example.com', notification_email: 'me@example.com' },
  ]) {
    const answer = await post(body, { 'X-Request-Id': NOTE_SHAPED_REQUEST_ID });
    expect(answer.status).toBe(200);
    uuids.push(((await answer.json()) as { uuid: string }).uuid);
  }
  expect((await get(`/api/view/${uuids[1]}.php`)).status).toBe(200);
  expect((await get(`/api/view/${randomUUIDLike()}.php`)).status).toBe(404);
  expect((await post({ content: '' })).status).toBe(400);
  expect((await fetch(`${gateway}/api/create.php`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"content":' })).status).toBe(400);
  expect((await get('/api/stats.php')).status).toBe(200);
  expect((await get('/api/nothing-here')).status).toBe(404);
  expect((await get('/unsubscribe/not-a-token')).status).toBeLessThan(500);

  // The note page and its reveal form: a wrong passcode, then the right one.
  for (const passcode of ['wrong', 'open sesame']) {
    const page = await get(`/${uuids[1]}`, { Accept: 'text/html' });
    expect(page.status).toBe(200);
    const token = /name="form_token" value="([^"]+)"/.exec(await page.text())?.[1];
    expect(token).toBeDefined();
    const reveal = await fetch(`${gateway}/${uuids[1]}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: gateway, Accept: 'text/html' },
      body: new URLSearchParams({ form_token: token!, passcode }).toString(),
      signal: AbortSignal.timeout(15_000),
    });
    expect(reveal.status).toBe(passcode === 'wrong' ? 400 : 200);
  }
  return { uuids: [...uuids, NOTE_SHAPED_REQUEST_ID] };
}

function randomUUIDLike(): string {
  const hex = randomBytes(16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/** SIGTERM, exit 0, and every line of stdout and stderr strict JSON, the last one `stopped`, no note id (nor note-shaped request id) anywhere. */
async function stopAndCheckLines(name: string, child: RunningProcess, uuids: string[]): Promise<Array<Record<string, unknown>>> {
  expect({ name, exit: await child.stop() }).toEqual({ name, exit: { code: 0, signal: null } });
  const stdout = parseJsonLines(child.stdout());
  const stderr = parseJsonLines(child.stderr());
  expect(stdout.length).toBeGreaterThan(2);
  expect({ name, last: stdout.at(-1)?.msg }).toEqual({ name, last: 'stopped' });
  for (const line of [...stdout, ...stderr]) {
    expect(typeof line.level).toBe('string');
    expect(typeof line.msg).toBe('string');
  }
  for (const uuid of uuids) expect(child.output()).not.toContain(uuid);
  return [...stdout, ...stderr];
}

describe('every line is strict JSON: the all-in-one process on its embedded defaults', () => {
  it('when started fresh, driven and stopped with SIGTERM, then each line of its output parses strictly', async () => {
    if (!existsSync(ALL_IN_ONE)) throw new Error(`${ALL_IN_ONE} is missing: run \`npm run build\` first (npm test does)`);
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-json-logs-aio-'));
    const ports: Record<string, string> = {};
    for (const name of ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT']) {
      ports[name] = String(await freePort());
    }
    const gateway = `http://127.0.0.1:${ports.PORT}`;
    const app = await runProcess({
      script: ALL_IN_ONE,
      env: { ...CLEARED_ENV, ...ports, DATA_DIR: dataDir, PUBLIC_BASE_URL: gateway, LOG_LEVEL: 'info' },
      readyLine: 'all-in-one ready',
      readyTimeoutMs: 60_000,
      stopTimeoutMs: 40_000,
    });
    try {
      const { uuids } = await driveTraffic(gateway);
      const lines = await stopAndCheckLines('all-in-one', app, uuids);
      const categories = new Set(lines.map((line) => line.category).filter((category) => category !== undefined));
      expect([...categories]).toEqual(expect.arrayContaining(['notes/access', 'gateway/access']));
    } finally {
      if (app.exitStatus() === null) await app.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('every line is strict JSON: the four services as separate processes', () => {
  const tag = `jsonlogs_${randomBytes(4).toString('hex')}`;
  const databases: TestDatabase[] = [];
  const processes = new Map<string, RunningProcess>();
  let sink: SmtpSink | undefined;
  let dataDir: string | undefined;

  afterAll(async () => {
    for (const child of [...processes.values()].reverse()) if (child.exitStatus() === null) await child.stop();
    await sink?.close();
    for (const db of databases) await db.drop();
    await deleteRabbitObjects(tag);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('when notes, stats, mailer and gateway are started fresh, driven and stopped with SIGTERM, then each line of each parses strictly', async () => {
    for (const service of ['notes', 'stats', 'mailer', 'gateway']) {
      if (!existsSync(mainOf(service))) throw new Error(`${mainOf(service)} is missing: run \`npm run build\` first (npm test does)`);
    }
    await requireService('mariadb');
    await requireService('rabbitmq');
    await requireService('redis');
    dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-json-logs-'));
    for (const name of ['notes', 'stats', 'mailer']) databases.push(await createTestDatabase(`${tag}_${name}`));
    const [notesDb, statsDb, mailerDb] = databases as [TestDatabase, TestDatabase, TestDatabase];
    sink = await startSmtpSink();

    const ports: Record<string, [string, string]> = {};
    for (const service of ['gateway', 'notes', 'stats', 'mailer']) ports[service] = [String(await freePort()), String(await freePort())];
    const gateway = `http://127.0.0.1:${ports.gateway![0]}`;
    const shared = {
      ...CLEARED_ENV, LOG_LEVEL: 'info', DATA_DIR: dataDir, PUBLIC_BASE_URL: gateway,
      AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672', AMQP_EXCHANGE: tag, MAIL_KEYS: testKey('m1'), HEARTBEAT_INTERVAL_MS: '1000',
    };
    const start = async (service: string, env: Record<string, string | undefined>) => {
      const [port, adminPort] = ports[service]!;
      processes.set(service, await runProcess({
        script: mainOf(service),
        env: { ...shared, PORT: port, ADMIN_PORT: adminPort, ...env },
        readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
        readyTimeoutMs: 60_000,
        stopTimeoutMs: 40_000,
      }));
    };
    await start('notes', { DATABASE_URL: notesDb.url, MASTER_KEYS: testKey('k1'), LOOKUP_KEY: testKey() });
    await start('stats', { DATABASE_URL: statsDb.url, AMQP_QUEUE_PREFIX: `${tag}.` });
    // The mailer's key is its own secret: it keeps it in a data folder of its own, as its container does. (Beside
    // notes' keys it would be refused: keys are made only into a folder with no data at all.)
    const mailerDataDir = path.join(dataDir, 'mailer');
    await start('mailer', { DATA_DIR: mailerDataDir, DATABASE_URL: mailerDb.url, SMTP_URL: sink.url, MAIL_QUEUE: `${tag}.mailer.mail-commands` });
    await start('gateway', {
      NOTES_URL: `http://127.0.0.1:${ports.notes![0]}`, STATS_URL: `http://127.0.0.1:${ports.stats![0]}`, MAILER_URL: `http://127.0.0.1:${ports.mailer![0]}`,
      REDIS_URL: 'redis://127.0.0.1:6379', RATE_LIMIT_KEY_PREFIX: `${tag}:`,
    });

    const { uuids } = await driveTraffic(gateway);
    await sink.waitForMessages(1, 60_000);
    await waitFor(async () => {
      const answer = await fetch(`${gateway}/api/stats.php`);
      return ((await answer.json()) as { stats?: { total_notes_created?: number } }).stats?.total_notes_created === 3;
    }, { timeoutMs: 60_000, description: 'stats counting the three notes' });

    for (const service of ['gateway', 'mailer', 'stats', 'notes']) {
      const lines = await stopAndCheckLines(service, processes.get(service)!, uuids);
      expect(lines.every((line) => line.service === service)).toBe(true);
    }
  });
});

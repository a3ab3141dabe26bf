import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { freePort } from '@vanish/testkit/net';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { deleteRabbitObjects } from '@vanish/testkit/rabbitmq';
import { requireService } from '@vanish/testkit/services';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { callApi, CLEARED_ENV, testKey, testMailKeys } from './support/api-client';

// The deployed shape: four separate processes (as their containers run them) on the machine's
// MariaDB, RabbitMQ and Redis, each with its own database, on an exchange and queue names of this
// test's own. Needs `npm run build` first (npm test does).
const ROOT = path.resolve(__dirname, '..');
const mainOf = (service: string) => path.join(ROOT, 'services', service, 'dist', 'main.js');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

jest.setTimeout(120_000);

describe('the four services as separate processes on MariaDB, RabbitMQ and Redis', () => {
  const tag = `e2e_${randomBytes(4).toString('hex')}`;
  const databases: TestDatabase[] = [];
  const processes: RunningProcess[] = [];
  let sink: SmtpSink | undefined;
  let dataDir: string;
  let gateway: string;

  beforeAll(async () => {
    for (const service of ['notes', 'stats', 'mailer', 'gateway']) {
      if (!existsSync(mainOf(service))) throw new Error(`${mainOf(service)} is missing: run \`npm run build\` first (npm test does)`);
    }
    await requireService('mariadb');
    await requireService('rabbitmq');
    await requireService('redis');
    dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-system-'));
    const [notesDb, statsDb, mailerDb] = [
      await createTestDatabase(`${tag}_notes`),
      await createTestDatabase(`${tag}_stats`),
      await createTestDatabase(`${tag}_mailer`),
    ];
    databases.push(notesDb, statsDb, mailerDb);
    sink = await startSmtpSink();

    const port = async () => String(await freePort());
    const ports = {
      gateway: [await port(), await port()], notes: [await port(), await port()],
      stats: [await port(), await port()], mailer: [await port(), await port()],
    };
    gateway = `http://127.0.0.1:${ports.gateway[0]}`;
    const shared = {
      ...CLEARED_ENV,
      LOG_LEVEL: 'info',
      DATA_DIR: dataDir,
      PUBLIC_BASE_URL: gateway,
      AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
      AMQP_EXCHANGE: tag,
      HEARTBEAT_INTERVAL_MS: '1000',
    };
    const start = (service: string, env: Record<string, string | undefined>) =>
      runProcess({
        script: mainOf(service),
        env: { ...shared, PORT: ports[service as keyof typeof ports][0], ADMIN_PORT: ports[service as keyof typeof ports][1], ...env },
        readyUrl: `http://127.0.0.1:${ports[service as keyof typeof ports][1]}/readyz`,
        readyTimeoutMs: 60_000,
        stopTimeoutMs: 15_000,
      }).then((child) => {
        processes.push(child);
        return child;
      });

    await start('notes', { DATABASE_URL: notesDb.url, MASTER_KEYS: testKey('k1'), LOOKUP_KEY: testKey(), ...testMailKeys().notes });
    await start('stats', { DATABASE_URL: statsDb.url, AMQP_QUEUE_PREFIX: `${tag}.` });
    await start('mailer', { DATABASE_URL: mailerDb.url, SMTP_URL: sink.url, MAIL_QUEUE: `${tag}.mailer.mail-commands`, ...testMailKeys().mailer });
    await start('gateway', {
      NOTES_URL: `http://127.0.0.1:${ports.notes[0]}`,
      STATS_URL: `http://127.0.0.1:${ports.stats[0]}`,
      MAILER_URL: `http://127.0.0.1:${ports.mailer[0]}`,
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMIT_KEY_PREFIX: `${tag}:`,
    });
  });

  afterAll(async () => {
    for (const child of processes.reverse()) await child.stop();
    await sink?.close();
    for (const db of databases) await db.drop();
    await deleteRabbitObjects(tag);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('when a note is created through the gateway, then its metadata reads back through the gateway, unread', async () => {
    const created = await callApi(gateway, 'POST', '/api/create.php', { content: 'system e2e', max_views: 3, passcode: 'open sesame' });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ success: true, max_views: 3, has_passcode: true });
    expect(created.body.uuid).toMatch(UUID);

    const metadata = await callApi(gateway, 'GET', `/api/view/${created.body.uuid}.php`);
    expect(metadata.status).toBe(200);
    expect(metadata.body.note).toMatchObject({ uuid: created.body.uuid, has_passcode: true, max_views: 3, current_views: 0, is_destroyed: false });
  });

  it('when a send_link_email is given, then the mailer delivers the link through RabbitMQ to SMTP', async () => {
    const created = await callApi(gateway, 'POST', '/api/create.php', { content: 'mail me', send_link_email: 'friend@example.com' });
    expect(created.status).toBe(200);
    const [message] = await sink!.waitForMessages(1, 30_000);
    expect(message.to).toEqual(['friend@example.com']);
    expect(message.parsed.text ?? '').toContain(created.body.url);
  });

  it('when the release manifest is read through the gateway, then it is the one the build wrote (DECISIONS 17)', async () => {
    const res = await fetch(`${gateway}/.well-known/vanish-release.json`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(readFileSync(path.join(ROOT, 'services/notes/dist/release/vanish-release.json'), 'utf8'));
  });

  it('when the statistics are read through the gateway, then they count the notes created', async () => {
    const deadline = Date.now() + 30_000;
    let stats = await callApi(gateway, 'GET', '/api/stats.php');
    while (!(stats.body?.stats?.total_notes_created >= 2) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      stats = await callApi(gateway, 'GET', '/api/stats.php');
    }
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ success: true, stats: { total_notes_created: 2 } });
  });
});

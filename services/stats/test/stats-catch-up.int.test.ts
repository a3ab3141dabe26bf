import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import { silentLogger } from '@vanish/common';
import { dlqName, dlxName, retryQueueName } from '@vanish/bus';
import { createNotesService, loadNotesConfig, type NotesService } from '@vanish/notes';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';
import { createStatsService, loadStatsConfig, type StatsModule } from '../src';
import { countersOf, fetchStats } from './support/synthetic-events';

/**
 * End to end through the real notes service: notes are created, read and locked out while RabbitMQ
 * is unreachable from notes (a fault proxy cut between them). Creation keeps answering 200, the
 * events wait in the notes outbox, and once the broker is back the stats counters catch up exactly.
 */
const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const HEARTBEAT_MS = 300;

describe('stats catching up after RabbitMQ was unreachable from notes', () => {
  const tag = randomBytes(4).toString('hex');
  const exchange = `test.catch-up.${tag}`;
  const prefix = `test.${tag}.`;
  let statsDb: TestDatabase;
  let notesDb: TestDatabase;
  let dataDir: string;
  let proxy: FaultProxy;
  let dbProxy: FaultProxy;
  let stats: StatsModule;
  let notes: NotesService;
  let statsPort: number;
  let notesBase: string;

  beforeAll(async () => {
    await requireService('rabbitmq');
    statsDb = await createTestDatabase('vanish_catchup_stats');
    notesDb = await createTestDatabase('vanish_catchup_notes');
    dataDir = mkdtempSync(join(tmpdir(), 'vanish-catch-up-'));
    stats = await createStatsService(loadStatsConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATABASE_URL: statsDb.url, AMQP_URL, AMQP_EXCHANGE: exchange,
      AMQP_QUEUE_PREFIX: prefix, HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS), LOG_LEVEL: 'silent',
    }), { logger: silentLogger });
    statsPort = (await stats.start()).port;
    proxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 5672 });
    dbProxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 3306 });
    notes = await createNotesService(loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: notesDb.url.replace(':3306/', `:${dbProxy.port}/`),
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`,
      AMQP_URL: `amqp://guest:guest@127.0.0.1:${proxy.port}`, AMQP_EXCHANGE: exchange, HEARTBEAT_INTERVAL_MS: String(HEARTBEAT_MS),
    }), { logger: silentLogger });
    notesBase = `http://127.0.0.1:${(await notes.start()).port}`;
  }, 60_000);

  afterAll(async () => {
    await notes?.stop();
    await stats?.stop();
    await proxy?.close();
    await dbProxy?.close();
    const admin = await amqp.connect(AMQP_URL);
    const channel = await admin.createChannel();
    for (const q of ['stats.note-events', 'stats.heartbeats']) {
      for (const name of [q, dlqName(q), ...[200, 1000, 5000, 30000].map((d) => retryQueueName(q, d))]) await channel.deleteQueue(`${prefix}${name}`).catch(() => undefined);
    }
    await channel.deleteExchange(exchange).catch(() => undefined);
    await channel.deleteExchange(dlxName(exchange)).catch(() => undefined);
    await admin.close();
    await statsDb?.drop();
    await notesDb?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const createdUuids: string[] = [];
  const create = async (body: Record<string, unknown>): Promise<string> => {
    const res = await fetch(`${notesBase}/api/create.php`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status).toBe(200);
    const { uuid } = (await res.json()) as { uuid: string };
    createdUuids.push(uuid);
    return uuid;
  };

  /** The web reveal: GET the note page for its form token, then POST the form (as the browser would). */
  const reveal = async (uuid: string, passcode?: string): Promise<number> => {
    const page = await (await fetch(`${notesBase}/${uuid}`)).text();
    const token = /name="form_token" value="([^"]+)"/.exec(page)?.[1];
    if (!token) throw new Error(`no form token on the note page:\n${page.slice(0, 500)}`);
    const form = new URLSearchParams({ form_token: token, ...(passcode === undefined ? {} : { passcode }) });
    const res = await fetch(`${notesBase}/${uuid}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form.toString() });
    await res.arrayBuffer();
    return res.status;
  };

  it('when notes are created, read and locked out while the broker is unreachable, then creation answers 200 and the counters catch up exactly once it is back', async () => {
    // Before the cut: heartbeats from notes flow, so the notes database shows healthy.
    await waitFor(async () => (await fetchStats(statsPort)).health_status.database === 'healthy', { description: 'notes heartbeats reach stats', timeoutMs: 20_000 });

    proxy.cut();
    // Four read to destruction (max_views 1): accessed + destroyed(views, was_read).
    for (let i = 0; i < 4; i += 1) expect(await reveal(await create({ content: `one-time ${i}` }))).toBe(200);
    // Two locked out by five wrong passcodes: 5 × failed_access + destroyed(lockout, not read).
    for (let i = 0; i < 2; i += 1) {
      const uuid = await create({ content: `locked ${i}`, passcode: 'right' });
      for (let attempt = 0; attempt < 5; attempt += 1) expect([400, 404]).toContain(await reveal(uuid, 'wrong'));
    }
    // One wrong try, then read to destruction.
    const tried = await create({ content: 'tried', passcode: 'right' });
    expect(await reveal(tried, 'wrong')).toBe(400);
    expect(await reveal(tried, 'right')).toBe(200);
    // Five still alive, two of them read once.
    const alive = [];
    for (let i = 0; i < 5; i += 1) alive.push(await create({ content: `alive ${i}`, max_views: 3, expiry_type: 'both', expiry_time: 48 }));
    for (const uuid of alive.slice(0, 2)) expect(await reveal(uuid)).toBe(200);

    const expected = {
      total_notes_created: 12, active_notes: 5, destroyed_notes: 7,
      success_rate: Number(((5 / 7) * 100).toFixed(2)), notes_24h: 12, notes_7d: 12, notes_30d: 12,
    };
    // While cut: nothing reached stats, the events wait in the notes outbox, and notes fell silent.
    expect((await notes.outbox.backlog()).count).toBeGreaterThanOrEqual(12 + 7);
    expect((await fetchStats(statsPort)).total_notes_created).toBe(0);
    await waitFor(async () => (await fetchStats(statsPort)).health_status.database === 'unhealthy', { description: 'silence reported', timeoutMs: 10_000 });

    proxy.restore();
    const caughtUp = await waitFor(async () => {
      const s = await fetchStats(statsPort);
      return s.total_notes_created === expected.total_notes_created && s.destroyed_notes === expected.destroyed_notes ? s : undefined;
    }, { description: 'counters caught up', timeoutMs: 60_000, intervalMs: 100 });
    expect(countersOf(caughtUp)).toEqual(expected);
    await waitFor(async () => (await notes.outbox.backlog()).count === 0, { description: 'outbox drained', timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(countersOf(await fetchStats(statsPort))).toEqual(expected);
    expect((await fetchStats(statsPort)).health_status.database).toBe('healthy');

    // Anonymized: nothing stats keeps holds a note uuid (or anything shaped like a uuid), nor the content.
    const dump: string[] = [];
    for (const table of ['stats_counters', 'stats_created_minutes', 'stats_created_hours', 'stats_seen_events', 'stats_heartbeats']) {
      dump.push(JSON.stringify(await stats.knex(table).select('*')));
    }
    const text = dump.join('\n');
    expect(createdUuids).toHaveLength(12);
    for (const uuid of createdUuids) expect(text).not.toContain(uuid);
    expect(text).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i);
    expect(text).not.toMatch(/one-time|locked|alive|tried/);
  }, 120_000);

  it('when the notes database is cut, then health_status reports it within three periods, and healthy again after it returns', async () => {
    await waitFor(async () => (await fetchStats(statsPort)).health_status.database === 'healthy', { description: 'healthy first', timeoutMs: 30_000 });
    dbProxy.cut();
    const cutAt = Date.now();
    await waitFor(async () => (await fetchStats(statsPort)).health_status.database === 'unhealthy', { description: 'database reported unhealthy', timeoutMs: 10_000, intervalMs: 25 });
    expect(Date.now() - cutAt).toBeLessThanOrEqual(3 * HEARTBEAT_MS + 300);
    dbProxy.restore();
    await waitFor(async () => {
      const h = (await fetchStats(statsPort)).health_status;
      return h.database === 'healthy' && h.encryption === 'available';
    }, { description: 'healthy after the database returns', timeoutMs: 30_000 });
  }, 60_000);
});

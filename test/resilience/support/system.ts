import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import mysql from 'mysql2/promise';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { freePort, waitFor } from '@vanish/testkit/net';
import { checkApiAnswer } from '@vanish/testkit/openapi';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { deleteRabbitObjects, RABBITMQ_URL } from '@vanish/testkit/rabbitmq';
import { requireService } from '@vanish/testkit/services';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { CLEARED_ENV, testKey, testMailKeys, testWebhookKeys } from '../../support/api-client';

/**
 * The resilience topology: the five services as separate processes (their dist/main.js), each on
 * a database of its own on the machine's MariaDB, on an exchange and queue names of this run's own,
 * with a fault proxy between the services and each dependency the tests break:
 *
 *   notes ──[db proxy]── MariaDB            gateway ──[redis proxy]── Redis
 *   mailer ──[db proxy]── MariaDB
 *   notes, stats, mailer, webhooks ──[amqp proxy]── RabbitMQ      mailer ── SMTP sink (its own proxy)
 *
 * Every call made through `api`/`page` is recorded, so `checkInvariants()` can say after each
 * scenario: counters add up, outbox drained, queues empty, no unexpected 5xx, and no note shown
 * more than max_views times.
 */
const ROOT = path.resolve(__dirname, '../../..');
export const mainOf = (service: string) => path.join(ROOT, 'services', service, 'dist', 'main.js');
const run = promisify(execFile);

export type ServiceName = 'notes' | 'stats' | 'mailer' | 'webhooks' | 'gateway';

export interface Answer {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON checked against the OpenAPI document
  text: string;
  ms: number;
}

export interface RevealAnswer {
  status: number;
  /** The note's content as the page shows it (HTML-unescaped), when revealed. */
  content?: string;
  text: string;
}

export interface SystemOptions {
  /** Extra environment per service. */
  env?: Partial<Record<ServiceName, Record<string, string>>>;
  /**
   * A RabbitMQ cluster instead of the machine's broker (test/cluster): the services get this AMQP_URL
   * (a node list), queue depths come from `queueDepths`, and there is no tap (busMessages stays empty).
   */
  broker?: { url: string; queueDepths(prefix: string): Promise<Record<string, number>> };
  /** A MariaDB of the test's own for notes (test/cluster), with the database already created on it. */
  notesDatabase?: { port: number; database: TestDatabase };
  /**
   * One database server of the test's own for all four services (test/cluster: a Galera cluster's
   * writer address), each on a database of its own created there; notes then use it directly, not
   * through the notesDb proxy.
   */
  database?: { port: number; createDatabase(prefix: string): Promise<TestDatabase> };
  /** Gateways beside the first one, each a process of its own with the same configuration (System.gateways). */
  extraGateways?: number;
}

export interface System {
  readonly tag: string;
  readonly gateway: string;
  /** Every gateway's base URL, the first one (`gateway`) included. */
  readonly gateways: readonly string[];
  readonly adminUrl: Record<ServiceName, string>;
  /** mailerDb: between the mailer and its database (not with `database`, where it connects directly). */
  readonly proxies: { notesDb: FaultProxy; mailerDb: FaultProxy; redis: FaultProxy; amqp: FaultProxy };
  readonly sink: SmtpSink;
  readonly databases: Record<'notes' | 'stats' | 'mailer' | 'webhooks', TestDatabase>;
  readonly processes: Record<ServiceName, RunningProcess>;
  /** Every RabbitMQ message published on this run's exchange, as received by a tap queue (body as text). */
  readonly busMessages: Array<{ routingKey: string; body: string }>;
  /** While true, 5xx answers are expected (a dependency is cut on purpose) and not counted as unexpected. */
  allow5xx: boolean;
  readonly unexpected5xx: string[];
  /** API call through the gateway; the answer is checked against the OpenAPI document. */
  api(method: string, urlPath: string, json?: unknown, headers?: Record<string, string>): Promise<Answer>;
  /** Raw HTTP call through the gateway (no OpenAPI check). */
  raw(method: string, urlPath: string, init?: { headers?: Record<string, string>; body?: string | Buffer }): Promise<Answer>;
  /** Creates a note through the API and records it (max_views) for the "shown at most" invariant. */
  create(input: Record<string, unknown>): Promise<Answer>;
  /** The web reveal: GET the note page for its form token, POST it back same-origin. */
  reveal(uuid: string, passcode?: string, headers?: Record<string, string>): Promise<RevealAnswer>;
  /** success+stats body of GET /api/stats.php. */
  stats(): Promise<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Counts of 200 creates and of content shown, per uuid. */
  readonly created: Map<string, { maxViews: number; shown: number }>;
  sql(db: 'notes' | 'stats' | 'mailer' | 'webhooks', query: string, params?: unknown[]): Promise<any[]>; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Every row of every table of the three databases, as text (buffers as utf8 and latin1). */
  dumpDatabases(): Promise<string>;
  /** All output of all service processes, the ones that ended included. */
  logs(): string;
  /** The full environment a service process runs with (for an operator command run beside it). */
  serviceEnv(service: ServiceName): Record<string, string | undefined>;
  /** Starts a stopped or killed service again with the same ports and environment. */
  restart(service: ServiceName, extraEnv?: Record<string, string>): Promise<RunningProcess>;
  /** Message counts of this run's queues (tap excluded). */
  queueDepths(): Promise<Record<string, number>>;
  /**
   * Waits until outbox and queues drain and stats count every 200 create (exactTotal: and no more than
   * those plus the creates of unknown outcome), then checks every invariant.
   */
  checkInvariants(options?: { exactTotal?: boolean; timeoutMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

const HIGH_LIMIT = '1000000';

export async function startSystem(options: SystemOptions = {}): Promise<System> {
  for (const service of ['notes', 'stats', 'mailer', 'webhooks', 'gateway']) {
    if (!existsSync(mainOf(service))) throw new Error(`${mainOf(service)} is missing: run \`npm run build\` first`);
  }
  await requireService('mariadb');
  await requireService('rabbitmq');
  await requireService('redis');
  const tag = `res_${randomBytes(4).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-resilience-'));
  const ownDatabase = options.database;
  const createDatabase = (name: string) => (ownDatabase ? ownDatabase.createDatabase(name) : createTestDatabase(name));
  const dbPort = ownDatabase?.port ?? 3306;
  const databases = {
    notes: options.notesDatabase?.database ?? await createDatabase(`${tag}_notes`),
    stats: await createDatabase(`${tag}_stats`),
    mailer: await createDatabase(`${tag}_mailer`),
    webhooks: await createDatabase(`${tag}_webhooks`),
  };
  const proxies = {
    notesDb: await startFaultProxy({ targetHost: '127.0.0.1', targetPort: options.notesDatabase?.port ?? dbPort }),
    mailerDb: await startFaultProxy({ targetHost: '127.0.0.1', targetPort: dbPort }),
    redis: await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 6379 }),
    amqp: await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 5672 }),
  };
  const sink = await startSmtpSink();
  const ports: Record<ServiceName, [number, number]> = {
    gateway: [await freePort(), await freePort()], notes: [await freePort(), await freePort()],
    stats: [await freePort(), await freePort()], mailer: [await freePort(), await freePort()],
    webhooks: [0, await freePort()], // admin port only
  };
  const gateway = `http://127.0.0.1:${ports.gateway[0]}`;
  const amqpUrl = options.broker?.url ?? `amqp://guest:guest@127.0.0.1:${proxies.amqp.port}`;
  const shared: Record<string, string | undefined> = {
    ...CLEARED_ENV,
    LOG_LEVEL: 'info',
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: gateway,
    AMQP_URL: amqpUrl,
    AMQP_EXCHANGE: tag,
    HEARTBEAT_INTERVAL_MS: '1000',
    SHUTDOWN_GRACE_MS: '10000',
  };
  const dbUrl = (db: TestDatabase, port = dbPort) => `mysql://root@127.0.0.1:${port}/${db.name}`;
  const envOf: Record<ServiceName, Record<string, string | undefined>> = {
    notes: {
      DATABASE_URL: dbUrl(databases.notes, ownDatabase ? dbPort : proxies.notesDb.port), MASTER_KEYS: testKey('k1'), LOOKUP_KEY: testKey(), SWEEP_INTERVAL_MS: '500',
      ...testMailKeys().notes, ...testWebhookKeys().notes, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
    webhooks: {
      DATABASE_URL: dbUrl(databases.webhooks), WEBHOOK_QUEUE: `${tag}.webhooks.note-events`, ...testWebhookKeys().webhooks,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS_MS: '300,1000', WEBHOOK_QUEUE_WATCH_INTERVAL_MS: '500',
    },
    stats: { DATABASE_URL: dbUrl(databases.stats), AMQP_QUEUE_PREFIX: `${tag}.` },
    mailer: {
      DATABASE_URL: dbUrl(databases.mailer, ownDatabase ? dbPort : proxies.mailerDb.port), SMTP_URL: sink.url, MAIL_QUEUE: `${tag}.mailer.mail-commands`, ...testMailKeys().mailer,
      // 2 s to connect and be greeted (a silent server fails fast); 10 s for a reply once greeted, so a
      // process descheduled for a moment on a loaded machine does not give up on a message the sink took.
      SMTP_TIMEOUT_MS: '2000', SMTP_REPLY_TIMEOUT_MS: '10000', MAIL_RETRY_INITIAL_DELAY_MS: '300', MAIL_RETRY_MAX_DELAY_MS: '1000',
      MAIL_QUOTA_PER_HOUR: HIGH_LIMIT, MAIL_QUOTA_PER_DAY: HIGH_LIMIT,
    },
    gateway: {
      NOTES_URL: `http://127.0.0.1:${ports.notes[0]}`,
      STATS_URL: `http://127.0.0.1:${ports.stats[0]}`,
      MAILER_URL: `http://127.0.0.1:${ports.mailer[0]}`,
      REDIS_URL: `redis://127.0.0.1:${proxies.redis.port}`,
      RATE_LIMIT_KEY_PREFIX: `${tag}:`,
      RATE_LIMIT_CREATE_PER_HOUR: HIGH_LIMIT, RATE_LIMIT_VIEW_PER_HOUR: HIGH_LIMIT, RATE_LIMIT_STATS_PER_HOUR: HIGH_LIMIT,
      TRUST_PROXY: 'loopback',
    },
  };
  for (const service of Object.keys(envOf) as ServiceName[]) Object.assign(envOf[service], options.env?.[service] ?? {});

  const processes = {} as Record<ServiceName, RunningProcess>;
  const ended: string[] = [];
  const start = async (service: ServiceName, extraEnv: Record<string, string> = {}) => {
    const child = await runProcess({
      script: mainOf(service),
      env: { ...shared, PORT: String(ports[service][0]), ADMIN_PORT: String(ports[service][1]), ...envOf[service], ...extraEnv },
      readyUrl: `http://127.0.0.1:${ports[service][1]}/readyz`,
      readyTimeoutMs: 60_000,
      stopTimeoutMs: 15_000,
    });
    processes[service] = child;
    return child;
  };
  const extraGateways: RunningProcess[] = [];
  const gateways = [gateway];
  try {
    for (const service of ['notes', 'stats', 'mailer', 'webhooks', 'gateway'] as ServiceName[]) await start(service);
    for (let i = 0; i < (options.extraGateways ?? 0); i += 1) {
      const [port, adminPort] = [await freePort(), await freePort()];
      extraGateways.push(await runProcess({
        script: mainOf('gateway'),
        env: { ...shared, PORT: String(port), ADMIN_PORT: String(adminPort), ...envOf.gateway },
        readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
        readyTimeoutMs: 60_000,
        stopTimeoutMs: 15_000,
      }));
      gateways.push(`http://127.0.0.1:${port}`);
    }
  } catch (err) {
    // A service that would not start must not leave the ones before it running (the caller never gets
    // a System to stop): they would hold their ports and consume for the rest of the run.
    for (const child of [...extraGateways, ...Object.values(processes)].reverse()) await child.stop().catch(() => undefined);
    throw err;
  }

  // A tap on the exchange: every payload any service publishes, for the canary checks.
  const busMessages: Array<{ routingKey: string; body: string }> = [];
  const tapQueue = `${tag}.tap`;
  const tapConnection = options.broker ? undefined : await amqp.connect(RABBITMQ_URL);
  if (tapConnection) {
    const tapChannel = await tapConnection.createChannel();
    await waitFor(async () => {
      const probe = await tapConnection.createChannel();
      probe.on('error', () => undefined);
      try { await probe.checkExchange(tag); await probe.close(); return true; } catch { return false; }
    }, { timeoutMs: 30_000, description: `exchange ${tag} declared by the services` });
    await tapChannel.assertQueue(tapQueue, { exclusive: true, autoDelete: true });
    await tapChannel.bindQueue(tapQueue, tag, '#');
    await tapChannel.bindQueue(tapQueue, `${tag}.dlx`, '#').catch(() => undefined);
    await tapChannel.consume(tapQueue, (msg) => {
      if (msg) busMessages.push({ routingKey: msg.fields.routingKey, body: msg.content.toString('utf8') });
    }, { noAck: true });
  }

  const pool = {
    notes: mysql.createPool({ uri: dbUrl(databases.notes, options.notesDatabase?.port ?? dbPort), connectionLimit: 2 }),
    stats: mysql.createPool({ uri: dbUrl(databases.stats), connectionLimit: 2 }),
    mailer: mysql.createPool({ uri: dbUrl(databases.mailer), connectionLimit: 2 }),
    webhooks: mysql.createPool({ uri: dbUrl(databases.webhooks), connectionLimit: 2 }),
  };

  const created = new Map<string, { maxViews: number; shown: number }>();
  const unexpected5xx: string[] = [];
  // Creates answered 500: notes says 500 only when a COMMIT went out and its outcome could not be learned (the
  // database went away at that moment), so each may or may not have been kept. A 503 create never commits.
  let unknownOutcomeCreates = 0;
  const record = (method: string, urlPath: string, status: number) => {
    if (status >= 500 && !system.allow5xx) unexpected5xx.push(`${method} ${urlPath.slice(0, 80)} → ${status}`);
  };

  const raw: System['raw'] = async (method, urlPath, init = {}) => {
    const started = Date.now();
    const response = await fetch(`${gateway}${urlPath}`, { method, headers: init.headers, body: init.body, signal: AbortSignal.timeout(20_000), redirect: 'manual' });
    const text = await response.text();
    let body: unknown = text;
    if ((response.headers.get('content-type') ?? '').includes('json') && text !== '') {
      try { body = JSON.parse(text); } catch { body = text; }
    }
    record(method, urlPath, response.status);
    if (method === 'POST' && urlPath === '/api/create.php') {
      const uuid = (body as { uuid?: unknown } | null)?.uuid;
      if (response.status === 500) unknownOutcomeCreates += 1;
      else if (response.status === 200 && typeof uuid === 'string' && !created.has(uuid)) {
        created.set(uuid, { maxViews: (body as { max_views: number }).max_views, shown: 0 });
      }
    }
    return { status: response.status, headers: response.headers, body, text, ms: Date.now() - started };
  };

  const api: System['api'] = async (method, urlPath, json, headers = {}) => {
    const answer = await raw(method, urlPath, {
      headers: json === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    checkApiAnswer({ method, path: urlPath, status: answer.status, headers: answer.headers, body: answer.body });
    return answer;
  };

  const system: System = {
    tag, gateway, gateways, proxies, sink, databases, processes, busMessages, created, unexpected5xx,
    allow5xx: false,
    adminUrl: Object.fromEntries((Object.keys(ports) as ServiceName[]).map((s) => [s, `http://127.0.0.1:${ports[s][1]}`])) as Record<ServiceName, string>,
    api,
    raw,
    async create(input) {
      return api('POST', '/api/create.php', input); // raw() records every 200 create
    },
    async reveal(uuid, passcode, headers = {}) {
      const page = await raw('GET', `/${uuid}`, { headers });
      const token = /name="form_token" value="([^"]+)"/.exec(page.text)?.[1];
      if (page.status !== 200 || !token) return { status: page.status, text: page.text };
      const form = new URLSearchParams({ form_token: token, ...(passcode === undefined ? {} : { passcode }) });
      const answer = await raw('POST', `/${uuid}`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', origin: gateway, ...headers },
        body: form.toString(),
      });
      const match = /<pre class="content" id="note-content"[^>]*>([\s\S]*?)<\/pre>/.exec(answer.text);
      const content = match ? unescapeHtml(match[1]!) : undefined;
      if (answer.status === 200 && content !== undefined) {
        const entry = created.get(uuid);
        if (entry) entry.shown += 1;
      }
      return { status: answer.status, content, text: answer.text };
    },
    async stats() {
      const answer = await api('GET', '/api/stats.php');
      if (answer.status !== 200) throw new Error(`stats answered ${answer.status}: ${answer.text.slice(0, 200)}`);
      return answer.body.stats;
    },
    async sql(db, query, params = []) {
      const [rows] = await pool[db].query(query, params);
      return rows as any[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    },
    async dumpDatabases() {
      let out = '';
      for (const db of ['notes', 'stats', 'mailer', 'webhooks'] as const) {
        const tables = await system.sql(db, 'SHOW TABLES');
        for (const row of tables) {
          const table = String(Object.values(row)[0]);
          const rows = await system.sql(db, `SELECT * FROM \`${table}\``);
          for (const r of rows) {
            for (const value of Object.values(r)) {
              if (Buffer.isBuffer(value)) out += `${value.toString('utf8')}\n${value.toString('latin1')}\n${value.toString('hex')}\n`;
              else out += `${String(value)}\n`;
            }
          }
        }
      }
      return out;
    },
    logs() {
      return ended.join('\n') + [...Object.values(processes), ...extraGateways].map((p) => p.output()).join('\n');
    },
    serviceEnv(service) {
      return { ...shared, PORT: String(ports[service][0]), ADMIN_PORT: String(ports[service][1]), ...envOf[service] };
    },
    async restart(service, extraEnv = {}) {
      const old = processes[service];
      if (old && !old.exitStatus()) await old.stop();
      ended.push(old?.output() ?? '');
      return start(service, extraEnv);
    },
    async queueDepths() {
      if (options.broker) {
        const depths = await options.broker.queueDepths(tag);
        delete depths[tapQueue];
        return depths;
      }
      const { stdout } = await run('rabbitmqctl', ['list_queues', '-q', '--no-table-headers', 'name', 'messages'], { timeout: 30_000 });
      const depths: Record<string, number> = {};
      for (const line of stdout.split('\n')) {
        const [name, count] = line.trim().split(/\s+/);
        if (name && name.startsWith(tag) && name !== tapQueue) depths[name] = Number(count);
      }
      return depths;
    },
    async checkInvariants({ exactTotal = true, timeoutMs = 60_000 } = {}) {
      const createdOk = created.size;
      const mayBeKept = unknownOutcomeCreates;
      let last = '';
      await waitFor(async () => {
        const [outbox] = await system.sql('notes', 'SELECT COUNT(*) AS n FROM outbox');
        const depths = await system.queueDepths();
        const busy = Object.entries(depths).filter(([name, n]) => n > 0 && !name.endsWith('.heartbeats'));
        const stats = await system.stats();
        last = `outbox ${outbox.n}, queues ${JSON.stringify(busy)}, total ${stats.total_notes_created} vs ${createdOk} created (and ${mayBeKept} of unknown outcome)`;
        if (Number(outbox.n) !== 0 || busy.length > 0) return false;
        const total = Number(stats.total_notes_created);
        // A create answered 500 may have been kept (its COMMIT went, its answer did not come back), and then
        // its event counts: exact means every 200 counted and nothing beyond those that may have been kept.
        return exactTotal ? total >= createdOk && total <= createdOk + mayBeKept : total >= createdOk;
      }, { timeoutMs, intervalMs: 500, description: 'outbox drained, queues empty, stats caught up' }).catch(async (err: Error) => {
        // Keep what the services said, for the one who reads this failure.
        const file = path.join(tmpdir(), `${tag}-services.log`);
        writeFileSync(file, system.logs());
        const depths = await system.queueDepths().catch(() => ({}));
        throw new Error(`${err.message}; last seen: ${last}; all queues ${JSON.stringify(depths)}; service logs in ${file}`);
      });
      const stats = await system.stats();
      expect(stats.active_notes + stats.destroyed_notes).toBe(stats.total_notes_created);
      expect(stats.notes_24h).toBeLessThanOrEqual(stats.notes_7d);
      expect(stats.notes_7d).toBeLessThanOrEqual(stats.notes_30d);
      expect(stats.notes_30d).toBeLessThanOrEqual(stats.total_notes_created);
      expect(unexpected5xx).toEqual([]);
      const overShown = [...created.values()].filter((entry) => entry.shown > entry.maxViews);
      expect(overShown).toEqual([]);
    },
    async stop() {
      // RESILIENCE_LOGS=dir keeps every service's output of this run for a look after a failure.
      for (const loop of [...loops]) await loop.stop();
      if (process.env.RESILIENCE_LOGS) writeFileSync(path.join(process.env.RESILIENCE_LOGS, `${tag}.log`), system.logs());
      for (const extra of extraGateways) await extra.stop();
      for (const service of ['gateway', 'webhooks', 'mailer', 'stats', 'notes'] as ServiceName[]) await processes[service]?.stop();
      await tapConnection?.close().catch(() => undefined);
      for (const p of Object.values(pool)) await p.end().catch(() => undefined);
      await sink.close();
      for (const proxy of Object.values(proxies)) await proxy.close();
      for (const db of Object.values(databases)) await db.drop();
      if (!options.broker) await deleteRabbitObjects(tag).catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return system;
}

export function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|#96);/g, (_m, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`' })[name]!);
}

const loops = new Set<{ stop(): Promise<void> }>();

/**
 * Runs `work` repeatedly in the background (light traffic) until the returned stop() is called;
 * System.stop() stops any loop a failed test left running, so jest can exit.
 */
export function background(work: () => Promise<unknown>, pauseMs = 100): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      await work().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  })();
  const handle = { async stop() { running = false; loops.delete(handle); await loop; } };
  loops.add(handle);
  return handle;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

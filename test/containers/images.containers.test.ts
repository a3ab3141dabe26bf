// `npm run test:containers`: the five service images are built for real with podman from the Dockerfile
// and run as containers (production mode, read-only root, no capabilities) against the machine's
// MariaDB, Redis and RabbitMQ and an SMTP sink; a note is created, read, revealed and mailed
// through the containerized gateway, statistics count it, the webhooks container takes its events
// and, in production, refuses to connect to a loopback subscription; a real Prometheus scrapes all
// five, and each container runs as a non-root user and stops within 5 s of SIGTERM.
//
// On these machines podman needs a locally made base image and the certificate bundle for `npm ci`
// (docs/operations.md, "Images"): ./podman.ts makes the former and mounts the latter for the build.
// `--network host` because RabbitMQ's guest account only accepts loopback.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { KeyRing, publicRingOf } from '@vanish/common';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { freePort, waitFor } from '@vanish/testkit/net';
import { deleteRabbitObjects } from '@vanish/testkit/rabbitmq';
import { requireService } from '@vanish/testkit/services';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { buildImage, must, preparePodman, run } from './podman';

const SERVICES = ['notes', 'stats', 'mailer', 'webhooks', 'gateway'] as const;
// The webhooks service has no public traffic: only its admin port (metrics, health) listens.
const ADMIN_ONLY: ReadonlySet<Service> = new Set(['webhooks']);
type Service = (typeof SERVICES)[number];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const PROM_CLIENT_DEFAULT_LINT = ['active_handles', 'active_requests', 'active_resources']
  .map((name) => `nodejs_${name}_total non-counter metrics should not have "_total" suffix`);
// The webhooks service names its metrics webhook_* (docs/webhooks.md, Metrics); the others <service>_*.
const METRIC_PREFIX: Partial<Record<Service, string>> = { webhooks: 'webhook_' };
const key = (id?: string) => (id ? `${id}:${randomBytes(32).toString('base64')}` : randomBytes(32).toString('base64'));

// Building five images from a cold cache takes minutes on two shared cores; the bound only catches hangs.
jest.setTimeout(30 * 60_000);

describe('the five images, built with podman and run as containers', () => {
  const tag = `ct_${randomBytes(4).toString('hex')}`;
  const containerName = (service: Service) => `vanish-${tag.replace('_', '-')}-${service}`;
  const image = (service: Service) => `localhost/vanish-${service}:containers-test`;
  const databases: TestDatabase[] = [];
  const started: Service[] = [];
  const ports = {} as Record<Service, { port: number; admin: number }>;
  let sink: SmtpSink | undefined;
  let scratch: string;
  let gateway: string;
  let prometheus: { stop(): Promise<void>; url: string } | undefined;
  // A loopback listener named by an operator subscription: production must refuse it without connecting.
  let forbiddenTarget: { server: Server; connections: number } | undefined;

  beforeAll(async () => {
    await preparePodman();
    await requireService('mariadb');
    await requireService('rabbitmq');
    await requireService('redis');
    scratch = mkdtempSync(path.join(tmpdir(), 'vanish-containers-'));

    // 1. The five images, exactly as a user builds them (the base stand-in and CA bundle: ./podman.ts).
    for (const service of SERVICES) await buildImage(service, image(service));

    // 2. Dependencies of this test only: databases, an SMTP sink, free ports.
    for (const service of ['notes', 'stats', 'mailer', 'webhooks'] as const) databases.push(await createTestDatabase(`${tag}_${service}`));
    sink = await startSmtpSink();
    const forbidden = { server: createServer((socket) => socket.destroy()), connections: 0 };
    forbidden.server.on('connection', () => { forbidden.connections += 1; });
    await new Promise<void>((resolve) => forbidden.server.listen(0, '127.0.0.1', resolve));
    forbiddenTarget = forbidden;
    const forbiddenPort = (forbidden.server.address() as { port: number }).port;
    for (const service of SERVICES) ports[service] = { port: await freePort(), admin: await freePort() };
    gateway = `http://127.0.0.1:${ports.gateway.port}`;

    const mailPrivateKeys = KeyRing.parse(key('m1'));
    const webhookPrivateKeys = KeyRing.parse(key('w1'));
    const env: Record<Service, Record<string, string>> = {
      // The gateway is on http://127.0.0.1 here: production refuses an http origin unless told it is private,
      // and plaintext connections to the machine's servers (which have no TLS) unless told so by name.
      notes: {
        DATABASE_URL: databases[0]!.url, DATABASE_ALLOW_PLAINTEXT: 'true', MASTER_KEYS: key('k1'), LOOKUP_KEY: key(), MAIL_PUBLIC_KEYS: publicRingOf(mailPrivateKeys).serialize(),
        WEBHOOK_PUBLIC_KEYS: publicRingOf(webhookPrivateKeys).serialize(), RECEIPT_SIGNING_KEYS: key('r1'), PUBLIC_BASE_URL: gateway, ALLOW_INSECURE_PUBLIC_BASE_URL: 'true',
        // The files of notes (DECISIONS 14, FILE_STORAGE=fs) need a writable DATA_DIR (compose mounts a volume
        // at /data); here the read-only container's one writable place, its /tmp.
        DATA_DIR: '/tmp/data',
      },
      stats: { DATABASE_URL: databases[1]!.url, DATABASE_ALLOW_PLAINTEXT: 'true', AMQP_QUEUE_PREFIX: `${tag}.` },
      // An https subscription on a loopback address: accepted as configuration, refused at every delivery.
      webhooks: {
        DATABASE_URL: databases[3]!.url, DATABASE_ALLOW_PLAINTEXT: 'true', WEBHOOK_PRIVATE_KEYS: webhookPrivateKeys.serialize(), WEBHOOK_QUEUE: `${tag}.webhooks.note-events`,
        WEBHOOK_SUBSCRIPTIONS: JSON.stringify([{ url: `https://127.0.0.1:${forbiddenPort}/siem`, secret: `whsec_${randomBytes(24).toString('base64')}` }]),
        WEBHOOK_QUEUE_WATCH_INTERVAL_MS: '1000',
      },
      mailer: { DATABASE_URL: databases[2]!.url, DATABASE_ALLOW_PLAINTEXT: 'true', MAIL_PRIVATE_KEYS: mailPrivateKeys.serialize(), SMTP_URL: sink.url, SMTP_ALLOW_PLAINTEXT: 'true', MAIL_QUEUE: `${tag}.mailer.mail-commands`, PUBLIC_BASE_URL: gateway, ALLOW_INSECURE_PUBLIC_BASE_URL: 'true' },
      gateway: {
        NOTES_URL: `http://127.0.0.1:${ports.notes.port}`, STATS_URL: `http://127.0.0.1:${ports.stats.port}`, MAILER_URL: `http://127.0.0.1:${ports.mailer.port}`,
        REDIS_URL: 'redis://127.0.0.1:6379', REDIS_ALLOW_PLAINTEXT: 'true', RATE_LIMIT_KEY_PREFIX: `${tag}:`, LIMITER_KEY: key(), PUBLIC_BASE_URL: gateway, ALLOW_INSECURE_PUBLIC_BASE_URL: 'true',
      },
    };
    // The machine's MariaDB, RabbitMQ, Redis and the SMTP sink have no TLS listeners: production mode
    // accepts them only through the named plaintext opt-outs (docs/operations.md, TLS to dependencies).
    const amqp = { AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672', AMQP_ALLOW_PLAINTEXT: 'true', AMQP_EXCHANGE: tag, HEARTBEAT_INTERVAL_MS: '1000' };

    // 3. Start them as a hardened deployment would: the image's NODE_ENV=production, read-only root,
    //    no capabilities, an init as PID 1, the image's own (non-root) user.
    for (const service of SERVICES) {
      const serviceEnv = {
        ...(service === 'gateway' ? {} : amqp), ...env[service],
        ...(ADMIN_ONLY.has(service) ? {} : { PORT: String(ports[service].port) }), ADMIN_PORT: String(ports[service].admin),
      };
      await must('podman', [
        'run', '-d', '--name', containerName(service), '--network', 'host', '--init',
        '--read-only', '--tmpfs', '/tmp', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
        ...Object.entries(serviceEnv).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
        image(service),
      ]);
      started.push(service);
      const ready = `http://127.0.0.1:${ports[service].admin}/readyz`;
      await waitFor(async () => (await fetch(ready).catch(() => undefined))?.status === 200 || undefined, { timeoutMs: 90_000, intervalMs: 250 })
        .catch(async (err: Error) => {
          const logs = await run('podman', ['logs', '--tail', '40', containerName(service)]);
          throw new Error(`${service} container never became ready (${err.message}):\n${logs.stdout}${logs.stderr}`);
        });
    }
  });

  /** The reveal form, as a browser posts it: the page for its token, then the POST. */
  const revealThroughGateway = async (uuid: string): Promise<{ status: number; page: string }> => {
    const form = await fetch(`${gateway}/${uuid}`);
    expect(form.status).toBe(200);
    const formToken = /name="form_token" value="([^"]+)"/.exec(await form.text())?.[1];
    expect(formToken).toBeDefined();
    const revealed = await fetch(`${gateway}/${uuid}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: gateway },
      body: new URLSearchParams({ form_token: formToken! }).toString(),
    });
    return { status: revealed.status, page: await revealed.text() };
  };

  afterAll(async () => {
    await prometheus?.stop();
    if (forbiddenTarget) await new Promise<void>((resolve) => forbiddenTarget!.server.close(() => resolve()));
    for (const service of [...started].reverse()) await run('podman', ['rm', '-f', '-t', '0', containerName(service)]);
    await sink?.close();
    for (const db of databases) await db.drop();
    await deleteRabbitObjects(tag).catch(() => undefined);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('when the images are inspected, then each runs node as the non-root user node with NODE_ENV=production and a HEALTHCHECK', async () => {
    for (const service of SERVICES) {
      // podman puts the (docker-format) HEALTHCHECK beside Config, not in it.
      const [config] = JSON.parse(await must('podman', ['image', 'inspect', image(service)])) as [{ Config: { User: string; Cmd: string[]; Env: string[] }; Healthcheck?: { Test: string[] } }];
      expect(config.Config.User).toBe('node');
      // One command for every service: main.js links to this service's entry point.
      expect(config.Config.Cmd).toEqual(['node', '--heap-growing-percent=50', 'main.js']);
      expect(config.Config.Env).toContain(`SERVICE=${service}`);
      expect((await must('podman', ['exec', containerName(service), 'readlink', '/app/main.js'])).trim()).toBe(`services/${service}/dist/main.js`);
      expect(config.Config.Env).toContain('NODE_ENV=production');
      // The young-generation bound the RSS goal relies on reaches the running process.
      expect(config.Config.Env).toContain('NODE_OPTIONS=--max-semi-space-size=8');
      // A node in the container's environment, made to allocate: its nursery stops at 2 × 8 MiB (V8's default would reach 32 MiB).
      const nursery = "const a = []; for (let i = 0; i < 2e6; i += 1) a.push({ i }); require('v8').getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size";
      expect(Number((await must('podman', ['exec', containerName(service), 'node', '-p', nursery])).trim())).toBeLessThanOrEqual(16 * 1024 * 1024);
      expect(config.Healthcheck?.Test.join(' ')).toContain('/healthz');
      expect((await must('podman', ['exec', containerName(service), 'id', '-u'])).trim()).toBe('1000');
      // The supported runtime (Node 20 reached its end of life in April 2026).
      expect((await must('podman', ['exec', containerName(service), 'node', '--version'])).trim()).toMatch(/^v24\./);
      // Production dependencies only: no test-only native module, no compiler, no test runner.
      const modules = await must('podman', ['exec', containerName(service), 'ls', '/app/node_modules']);
      expect(modules.split('\n')).not.toEqual(expect.arrayContaining(['better-sqlite3', 'typescript', 'jest']));
    }
  });

  it('when podman runs the image HEALTHCHECK, then every container is healthy', async () => {
    for (const service of SERVICES) {
      const result = await run('podman', ['healthcheck', 'run', containerName(service)]);
      expect({ service, code: result.code, out: result.stdout.trim() }).toEqual({ service, code: 0, out: expect.stringMatching(/^(healthy)?$/) });
    }
  });

  it('when a note is created, read, revealed and mailed through the containerized gateway, then statistics count it', async () => {
    const created = await fetch(`${gateway}/api/create.php`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'from a container', max_views: 2, send_link_email: 'friend@example.com' }),
    });
    expect(created.status).toBe(200);
    const note = (await created.json()) as { uuid: string; url: string };
    expect(note.uuid).toMatch(UUID);
    expect(note.url).toBe(`${gateway}/${note.uuid}`);

    const metadata = await fetch(`${gateway}/api/view/${note.uuid}.php`);
    expect(metadata.status).toBe(200);
    expect(await metadata.json()).toMatchObject({ note: { uuid: note.uuid, max_views: 2, current_views: 0, is_destroyed: false } });

    expect(await revealThroughGateway(note.uuid)).toEqual({ status: 200, page: expect.stringContaining('from a container') });
    const afterReveal = await fetch(`${gateway}/api/view/${note.uuid}.php`);
    expect(await afterReveal.json()).toMatchObject({ note: { current_views: 1 } });

    const [message] = await sink!.waitForMessages(1, 60_000);
    expect(message!.to).toEqual(['friend@example.com']);
    expect(message!.parsed.text ?? '').toContain(note.url);

    const stats = await waitFor(async () => {
      const answer = await fetch(`${gateway}/api/stats.php`);
      const body = (await answer.json()) as { stats?: { total_notes_created?: number } };
      return answer.status === 200 && (body.stats?.total_notes_created ?? 0) >= 1 ? body : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    expect(stats).toMatchObject({ success: true, stats: { total_notes_created: 1 } });
  });

  it('when a note is revealed in production, then the webhooks container takes the event and refuses the loopback subscription without connecting', async () => {
    // Production notes refuses a loopback webhook at creation, by literal address and by a name that resolves to it.
    for (const webhookUrl of ['https://127.0.0.1/hook', 'https://localhost/hook']) {
      const refused = await fetch(`${gateway}/api/create.php`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'hooked', webhook_url: webhookUrl }),
      });
      expect({ webhookUrl, status: refused.status, body: await refused.json() })
        .toEqual({ webhookUrl, status: 400, body: expect.objectContaining({ code: 'INVALID_WEBHOOK_URL', details: expect.objectContaining({ parameter: 'webhook_url' }) }) });
    }
    const created = await fetch(`${gateway}/api/create.php`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'for the operator' }),
    });
    const note = (await created.json()) as { uuid: string; note_ref: string };
    expect(note.note_ref).toMatch(/^[0-9a-f]{32}$/);
    expect((await revealThroughGateway(note.uuid)).status).toBe(200);

    const metricsUrl = `http://127.0.0.1:${ports.webhooks.admin}/metrics`;
    const refusedCount = (text: string) => Number(/^webhook_deliveries_total\{[^}]*outcome="refused"[^}]*\} (\d+)/m.exec(text)?.[1] ?? 0);
    // One reveal of a one-view note: note.accessed and note.destroyed, each refused for the subscription.
    const metrics = await waitFor(async () => {
      const text = await (await fetch(metricsUrl)).text();
      return refusedCount(text) >= 2 ? text : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    expect(metrics).toMatch(/^webhook_delivery_attempts_total\{[^}]*result="refused"[^}]*\} [1-9]/m);
    expect(metrics).not.toMatch(/outcome="(retry|dead_letter)"[^}]*\} [1-9]/);
    expect(forbiddenTarget!.connections).toBe(0);
    const logs = await run('podman', ['logs', containerName('webhooks')]);
    expect(logs.stdout + logs.stderr).toContain('webhook target refused at delivery');
    expect(logs.stdout + logs.stderr).not.toContain(note.uuid);
  });

  it('when promtool checks each container\'s /metrics, then every exposition passes', async () => {
    for (const service of SERVICES) {
      const metrics = await (await fetch(`http://127.0.0.1:${ports[service].admin}/metrics`)).text();
      expect(metrics).toContain(METRIC_PREFIX[service] ?? `${service}_`);
      expect(metrics).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/); // never a note uuid
      const result = await run('promtool', ['check', 'metrics'], { input: metrics });
      // Exit 1 is a parse error; 3 is lint findings. prom-client's own default metrics name three
      // gauges *_total (not ours to rename): those findings, and only those, are accepted.
      const findings = (result.stdout + result.stderr).split('\n').map((l) => l.trim()).filter(Boolean)
        .filter((l) => !PROM_CLIENT_DEFAULT_LINT.includes(l));
      expect({ service, parsed: result.code === 0 || result.code === 3, findings }).toEqual({ service, parsed: true, findings: [] });
    }
  });

  it('when a real Prometheus scrapes the containers, then every target is up and the request histograms and business counters moved', async () => {
    const webPort = await freePort();
    const dir = mkdtempSync(path.join(scratch, 'prometheus-'));
    writeFileSync(path.join(dir, 'prometheus.yml'), [
      'global: { scrape_interval: 1s, evaluation_interval: 1s }',
      'scrape_configs:',
      '  - job_name: vanish',
      '    static_configs:',
      ...SERVICES.map((s) => `      - { targets: ["127.0.0.1:${ports[s].admin}"], labels: { component: ${s} } }`),
    ].join('\n'));
    const child = spawn('prometheus', [
      `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${webPort}`, '--log.level=warn',
    ], { stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    prometheus = { url: `http://127.0.0.1:${webPort}`, stop: async () => { child.kill('SIGTERM'); await exited; } };
    const query = async (promql: string) => {
      const answer = await fetch(`${prometheus!.url}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(() => undefined);
      if (answer?.status !== 200) return [];
      return ((await answer.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
    };

    const up = await waitFor(async () => {
      const result = await query('up{job="vanish"}');
      return result.length === SERVICES.length && result.every((r) => r.value[1] === '1') ? result : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    expect(up.map((r) => r.metric.component).sort()).toEqual([...SERVICES].sort());

    // Traffic after the first scrapes, so the counters move between samples.
    for (let i = 0; i < 3; i++) {
      expect((await fetch(`${gateway}/api/create.php`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: `scrape ${i}` }) })).status).toBe(200);
    }
    expect((await fetch(`${gateway}/api/stats.php`)).status).toBe(200);
    for (const promql of [
      'sum(increase(gateway_http_request_duration_seconds_count[1m]))',
      'sum(increase(notes_http_request_duration_seconds_count[1m]))',
      'sum(increase({__name__=~"notes_.*created.*_total"}[1m]))',
    ]) {
      const moved = await waitFor(async () => {
        const [sample] = await query(promql);
        return sample && Number(sample.value[1]) > 0 ? sample : undefined;
      }, { timeoutMs: 30_000, intervalMs: 500 }).catch(() => undefined);
      expect({ promql, moved: moved !== undefined }).toEqual({ promql, moved: true });
    }
  });

  it('when each container gets SIGTERM, then it exits cleanly within 5 seconds', async () => {
    for (const service of ['gateway', 'webhooks', 'mailer', 'stats', 'notes'] as const) {
      const startedAt = Date.now();
      // podman stop sends SIGTERM and would SIGKILL only after 10 s.
      await must('podman', ['stop', '-t', '10', containerName(service)], { timeoutMs: 30_000 });
      const elapsedMs = Date.now() - startedAt;
      const exitCode = (await must('podman', ['inspect', '-f', '{{.State.ExitCode}}', containerName(service)])).trim();
      expect({ service, exitCode, within5s: elapsedMs < 5_000 }).toEqual({ service, exitCode: '0', within5s: true });
    }
  });
});

// `npm run test:compose`: docker-compose.yml run for real, as a user runs it, with podman-compose.
// `up --build` from nothing, every healthcheck passing, then what the README says a user can do: its curl
// calls through the gateway, a note made and revealed on the page in Chromium, a send_link_email e-mail
// arriving in the mail catcher, Prometheus scraping every target, stats counting the creates; then the
// notes process is killed and the restart policy brings it back with no create lost; `down -v` leaves
// nothing behind.
//
// Nothing can be pulled here: scripts/compose-stand-in-images.sh builds TEST STAND-INS for the third-party
// images under the compose file's own names (test/compose/stand-ins/README.md), and the node base image
// (scripts/container-base-image.sh). The project's own five images are built by `up --build` from the one
// Dockerfile (SERVICE per service), with the local node base passed as NODE_IMAGE and the machine's CA bundle for npm
// (docs/operations.md, "Images").
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { parse as parseYaml } from 'yaml';
import { canConnect, waitFor } from '@vanish/testkit/net';

const ROOT = path.resolve(__dirname, '..', '..');
const PROJECT = 'vanish-compose-test';
const GATEWAY = 'http://localhost:8080';
const MAILPIT = 'http://localhost:8025';
const PROMETHEUS = 'http://localhost:9090';
const RABBITMQ_MANAGEMENT = 'http://localhost:15672';
const PUBLISHED_PORTS = [8080, 8025, 9090, 15672];
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

// Building five images and starting ten containers on two shared cores: the bound only catches hangs.
jest.setTimeout(40 * 60_000);

interface ComposeFile { services: Record<string, { image: string; build?: unknown; healthcheck?: unknown }> }
const compose = parseYaml(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as ComposeFile;
const SERVICES = Object.keys(compose.services);
const container = (service: string) => `${PROJECT}_${service}_1`;

interface Result { code: number | null; output: string }

function run(command: string, args: string[], timeoutMs = 120_000): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

async function must(command: string, args: string[], timeoutMs?: number): Promise<string> {
  const result = await run(command, args, timeoutMs);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.code}:\n${result.output.split('\n').slice(-40).join('\n')}`);
  return result.output;
}

async function getJson<T>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

const timings: Record<string, number> = {};
async function timed<T>(name: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings[name] = Math.round((Date.now() - started) / 1000);
  }
}

async function healthy(service: string): Promise<boolean> {
  // Healthchecks never run by themselves under podman without systemd; `podman healthcheck run` runs one.
  return (await run('podman', ['healthcheck', 'run', container(service)], 30_000)).code === 0;
}

async function waitAllHealthy(): Promise<void> {
  await waitFor(async () => {
    const states = await Promise.all(SERVICES.map(async (service) => [service, await healthy(service)] as const));
    const sick = states.filter(([, ok]) => !ok).map(([service]) => service);
    if (sick.length > 0) throw new Error(`not healthy yet: ${sick.join(', ')}`);
    return true;
  }, { timeoutMs: 6 * 60_000, intervalMs: 3000, description: 'every healthcheck passing' });
}

/**
 * The stats service's count, asked inside its container: the gateway allows 20 stats calls an hour per
 * address (the compose file's RATE_LIMIT_STATS_PER_HOUR), too few to poll through it.
 */
async function totalCreatedInside(): Promise<number> {
  const script = "fetch('http://127.0.0.1:8082/api/stats.php').then(r=>r.json()).then(b=>console.log(b.stats.total_notes_created))";
  return Number((await must('podman', ['exec', container('stats'), 'node', '-e', script])).trim());
}

/** Waits for stats to count `expected` creates, then checks the same number through the gateway, as a user sees it. */
async function expectCreatesCounted(expected: number): Promise<void> {
  await waitFor(async () => (await totalCreatedInside()) === expected, { timeoutMs: 90_000, intervalMs: 1000, description: `stats counting ${expected} creates` });
  const { status, body } = await getJson<{ stats: { total_notes_created: number } }>(`${GATEWAY}/api/stats.php`);
  expect(status).toBe(200);
  expect(body.stats.total_notes_created).toBe(expected);
}

async function create(body: Record<string, unknown>): Promise<{ uuid: string; url: string }> {
  const { status, body: answer } = await getJson<{ uuid: string; url: string }>(`${GATEWAY}/api/create.php`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  if (status !== 200) throw new Error(`create answered ${status}: ${JSON.stringify(answer)}`);
  return answer;
}

/** The last lines of some services' logs, for a failure message. */
async function recentLogs(services: string[]): Promise<string> {
  const parts = await Promise.all(services.map(async (service) => `--- ${service}\n${(await run('podman', ['logs', '--tail', '15', container(service)])).output}`));
  return parts.join('\n');
}

async function projectLeftovers(): Promise<string> {
  const label = `label=io.podman.compose.project=${PROJECT}`;
  const containers = (await must('podman', ['ps', '-a', '--filter', label, '--format', '{{.Names}}'])).trim();
  const volumes = (await must('podman', ['volume', 'ls', '--filter', label, '--format', '{{.Name}}'])).trim();
  const networks = (await must('podman', ['network', 'ls', '--format', '{{.Name}}'])).split('\n').filter((name) => name.startsWith(`${PROJECT}_`)).join(' ');
  return [containers, volumes, networks].filter((part) => part !== '').join(' ');
}

/** `down -v`, and the network podman-compose 1.0.3 leaves behind (docker compose removes it itself). */
async function composeDown(): Promise<void> {
  await must('podman-compose', ['-p', PROJECT, 'down', '-v'], 5 * 60_000);
  await run('podman', ['network', 'rm', `${PROJECT}_default`]);
}

describe('docker compose up --build, as the README says', () => {
  let scratch: string;
  let browser: Browser | undefined;
  let creates = 0;
  const started = Date.now();

  beforeAll(async () => {
    for (const tool of ['podman', 'podman-compose']) {
      await run(tool, ['--version']).catch(() => {
        throw new Error(`${tool} is not installed: apt-get install -y podman podman-compose runc catatonit debootstrap golang-github-containernetworking-plugin-dnsname (docs/testing.md)`);
      });
    }
    // On the CNI network backend, containers find each other by service name only through the dnsname
    // plugin; without it every service fails with `getaddrinfo ENOTFOUND mysql` after a long wait.
    const backend = (await must('podman', ['info', '--format', '{{.Host.NetworkBackend}}'])).trim();
    if (backend === 'cni' && !existsSync('/usr/lib/cni/dnsname')) {
      throw new Error('podman uses CNI without the dnsname plugin, so compose service names do not resolve: apt-get install -y golang-github-containernetworking-plugin-dnsname');
    }
    scratch = mkdtempSync(path.join(tmpdir(), 'vanish-compose-'));
    // From nothing: no container, volume or network of an earlier run, and the published ports free.
    await composeDown();
    await expect(projectLeftovers()).resolves.toBe('');
    for (const port of PUBLISHED_PORTS) {
      if (await canConnect('127.0.0.1', port)) throw new Error(`port ${port} is in use on 127.0.0.1: the compose stack publishes it; stop what listens there`);
    }

    await timed('stand-in images', () => must('bash', ['scripts/compose-stand-in-images.sh'], 20 * 60_000));
    const npmrc = path.join(scratch, 'build-npmrc');
    writeFileSync(npmrc, 'cafile=/etc/ssl/certs/ca-certificates.crt\n');
    const buildArgs = [
      '--format docker', '--build-arg NODE_IMAGE=docker.io/library/node:24-bookworm-slim',
      '-v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro', `-v ${npmrc}:/usr/local/etc/npmrc:ro`,
    ].join(' ');
    await timed('up --build', () => must('podman-compose', ['-p', PROJECT, `--podman-build-args=${buildArgs}`, 'up', '--build', '-d'], 25 * 60_000));
    await timed('healthy', waitAllHealthy);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  });

  let wentDown = false;

  afterAll(async () => {
    await browser?.close();
    // A failed step must not leave ten containers holding the machine's ports and memory.
    if (!wentDown) await composeDown().catch((err: unknown) => process.stdout.write(`compose down after a failure: ${(err as Error).message}\n`));
    if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
    const lines = Object.entries(timings).map(([step, seconds]) => `  ${step}: ${seconds} s`);
    process.stdout.write(`compose test timings (total ${Math.round((Date.now() - started) / 1000)} s):\n${lines.join('\n')}\n`);
  });

  it('every service of the compose file has a healthcheck, and all of them passed', () => {
    expect(SERVICES.sort()).toEqual(['gateway', 'mailer', 'mailpit', 'mysql', 'notes', 'prometheus', 'rabbitmq', 'redis', 'stats', 'webhooks']);
    for (const service of SERVICES) expect(compose.services[service]!.healthcheck).toBeDefined();
  });

  it("the README's curl calls work through the gateway as written", async () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const calls = readme.split('\n').filter((line) => line.startsWith('curl ') && line.includes('http://localhost:8080/api/'));
    expect(calls).toHaveLength(3);
    const [createCall, viewCall, statsCall] = calls as [string, string, string];
    const created = JSON.parse(await must('bash', ['-c', createCall])) as { success: boolean; uuid: string; url: string };
    creates += 1;
    expect(created.success).toBe(true);
    expect(created.url).toBe(`${GATEWAY}/${created.uuid}`);
    const viewed = JSON.parse(await must('bash', ['-c', viewCall.replace('<uuid>', created.uuid)])) as { success: boolean; note: { max_views: number } };
    expect(viewed.success).toBe(true);
    const stats = JSON.parse(await must('bash', ['-c', statsCall])) as { success: boolean; stats: { health_status: Record<string, string> } };
    expect(stats.success).toBe(true);
  });

  it('stats report the components healthy from their heartbeats', async () => {
    // Heartbeats every 10 s (HEARTBEAT_INTERVAL_MS in the compose file); three silent periods mean unhealthy.
    const script = "fetch('http://127.0.0.1:8082/api/stats.php').then(r=>r.json()).then(b=>console.log(JSON.stringify(b.stats.health_status)))";
    let last = '';
    try {
      await waitFor(async () => {
        last = (await must('podman', ['exec', container('stats'), 'node', '-e', script])).trim();
        return last === JSON.stringify({ database: 'healthy', encryption: 'available', email: 'configured' });
      }, { timeoutMs: 60_000, intervalMs: 2000, description: 'stats health_status all healthy' });
    } catch (err) {
      throw new Error(`${(err as Error).message}; last: ${last}\n${await recentLogs(['notes', 'stats', 'mailer'])}`);
    }
  });

  it('a note made on the page is revealed in Chromium', async () => {
    const page = await browser!.newPage();
    try {
      await page.goto(`${GATEWAY}/`);
      await page.getByLabel('Note').fill('made in the compose stack');
      await page.getByRole('button', { name: 'Create note' }).click();
      // 127.0.0.1 is a secure context: the page seals the note itself and its script adds the key to the link.
      await page.locator('#note-link').filter({ hasText: '#' }).waitFor();
      const link = (await page.locator('#note-link').textContent())!.trim();
      creates += 1;
      expect(link).toMatch(new RegExp(`^${GATEWAY}/${UUID.source}#[A-Za-z0-9_-]{43}$`));
      await page.goto(link);
      await page.getByRole('button', { name: 'Show the note' }).click();
      await page.locator('#note-content[data-opened="yes"]').waitFor();
      await expect(page.locator('#note-content').textContent()).resolves.toBe('made in the compose stack');
    } finally {
      await page.close();
    }
  });

  it('a send_link_email e-mail arrives in the mail catcher with the link', async () => {
    const recipient = `compose-${Date.now()}@example.com`;
    const note = await create({ content: 'mailed from compose', send_link_email: recipient });
    creates += 1;
    interface Summary { ID: string; To: Array<{ Address: string }> }
    const message = await waitFor(async () => {
      const { body } = await getJson<{ messages: Summary[] }>(`${MAILPIT}/api/v1/messages`);
      return body.messages.find((m) => m.To.some((to) => to.Address === recipient));
    }, { timeoutMs: 120_000, intervalMs: 1000, description: `an e-mail to ${recipient} in Mailpit` });
    const { body: full } = await getJson<{ Text: string; HTML: string }>(`${MAILPIT}/api/v1/message/${message.ID}`);
    expect(`${full.Text}\n${full.HTML}`).toContain(note.url);
  });

  it('Prometheus scrapes every target, and the RabbitMQ management UI takes the README login', async () => {
    interface Target { labels: Record<string, string>; health: string; lastError: string }
    const targets = await waitFor(async () => {
      const { body } = await getJson<{ data: { activeTargets: Target[] } }>(`${PROMETHEUS}/api/v1/targets?state=active`);
      const list = body.data.activeTargets;
      const down = list.filter((t) => t.health !== 'up').map((t) => `${t.labels.instance}: ${t.health} ${t.lastError}`);
      if (down.length > 0) throw new Error(down.join('; '));
      return list;
    }, { timeoutMs: 120_000, intervalMs: 2000, description: 'every Prometheus target up' });
    expect(targets.map((t) => t.labels.service ?? t.labels.job).sort()).toEqual(['gateway', 'mailer', 'notes', 'prometheus', 'stats', 'webhooks']);

    const management = await fetch(`${RABBITMQ_MANAGEMENT}/api/overview`, {
      headers: { Authorization: `Basic ${Buffer.from('vanish:dev-only-rabbitmq-password').toString('base64')}` },
    });
    expect(management.status).toBe(200);
  });

  it('stats count every create', async () => {
    await expectCreatesCounted(creates);
  });

  it('notes killed: the restart policy brings it back, and no create is lost', async () => {
    const before = [await create({ content: 'before the kill 1' }), await create({ content: 'before the kill 2' })];
    creates += before.length;
    const restartsBefore = Number((await must('podman', ['inspect', container('notes'), '--format', '{{.RestartCount}}'])).trim());
    // A crash: the container's process tree dies by SIGKILL from outside, as the kernel's OOM killer
    // would. (`docker compose kill` / `podman kill` count as a user's stop, which no restart policy undoes.)
    const pid = (await must('podman', ['inspect', container('notes'), '--format', '{{.State.Pid}}'])).trim();
    await must('kill', ['-KILL', pid]);
    await timed('notes back after a kill', async () => {
      await waitFor(async () => Number((await must('podman', ['inspect', container('notes'), '--format', '{{.RestartCount}}'])).trim()) > restartsBefore,
        { timeoutMs: 60_000, intervalMs: 500, description: 'notes restarted by its restart policy' });
      await waitFor(() => healthy('notes'), { timeoutMs: 3 * 60_000, intervalMs: 2000, description: 'notes healthy again' });
    });
    const after = await create({ content: 'after the kill' });
    creates += 1;
    for (const note of [...before, after]) {
      const { status } = await getJson(`${GATEWAY}/api/view/${note.uuid}.php`);
      expect(status).toBe(200);
    }
    await expectCreatesCounted(creates);
  });

  it('down -v leaves no container, volume or network', async () => {
    await timed('down -v', composeDown);
    wentDown = true;
    await expect(projectLeftovers()).resolves.toBe('');
  });
});

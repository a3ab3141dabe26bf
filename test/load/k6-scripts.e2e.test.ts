// Runs every k6 scenario of load-tests/ once (setup, one iteration, teardown) through the Node shim
// (load-tests/shim/run.mjs) against the all-in-one system started as a separate process, so that the
// scripts' requests, checks and thresholds really run in CI where the k6 binary cannot be installed.
// With a real `k6` on PATH, smoke.js also runs under k6 itself (with its usage report off).
// Needs `npm run build` first (it starts services/all-in-one/dist/main.js). Run: npm run test:load
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');
const SHIM = join(ROOT, 'load-tests', 'shim', 'run.mjs');
const MAIN = join(ROOT, 'services', 'all-in-one', 'dist', 'main.js');

jest.setTimeout(180_000);

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

interface RunningSystem {
  baseUrl: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts the all-in-one process on free ports with its own data dir, and waits until the API answers. */
async function startSystem(extraEnv: Record<string, string>): Promise<RunningSystem> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm run test:load does)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'vanish-load-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? tmpdir(),
    NODE_ENV: 'development',
    PORT: String(port),
    ADMIN_PORT: String(await freePort()),
    // the other services of the all-in-one process on ephemeral ports (its NOTES_PORT etc.; 0 = any free port)
    NOTES_PORT: '0', NOTES_ADMIN_PORT: '0', STATS_PORT: '0', STATS_ADMIN_PORT: '0', MAILER_PORT: '0', MAILER_ADMIN_PORT: '0', WEBHOOKS_ADMIN_PORT: '0',
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: baseUrl,
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  let output = '';
  const child: ChildProcess = spawn(process.execPath, [MAIN], { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };

  // GET /api/openapi.json is not rate limited (DECISIONS 8), so polling it spends no limit.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`the all-in-one process exited with ${child.exitCode} before it was ready:\n${output}`);
    }
    try {
      const res = await fetch(`${baseUrl}/api/openapi.json`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the all-in-one process was not ready within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { baseUrl, output: () => output, stop };
}

interface ShimRun { status: number | null; output: string }

/** Runs a script through the shim as a plain node process (the scripts are ES modules; jest runs CommonJS). */
function runShim(script: string, env: Record<string, string>, options: string[] = []): Promise<ShimRun> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [SHIM, ...options, script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('exit', (status) => done({ status, output }));
  });
}

/** Fails with the shim's summary (which lists the failed checks and thresholds) when the run failed. */
function expectPassed(run: ShimRun): void {
  if (run.status !== 0) throw new Error(`the shim run failed (exit ${run.status}):\n${run.output}`);
  expect(run.output).toMatch(/checks: (\d+) of \1 passed/);
}

/** A uuid anywhere in a text (any version: a note's is v4). */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

describe('k6 scenarios, one iteration each through the shim, against the all-in-one system', () => {
  let system: RunningSystem;
  let scenarioEnv: Record<string, string>;

  beforeAll(async () => {
    // A load run from one address needs the limits raised (load-tests/README.md).
    system = await startSystem({
      RATE_LIMIT_CREATE_PER_HOUR: '1000000',
      RATE_LIMIT_VIEW_PER_HOUR: '1000000',
      RATE_LIMIT_STATS_PER_HOUR: '1000000',
    });
    // LATENCY_SCALE: latency thresholds are evaluated but only catch hangs on a shared CI machine.
    scenarioEnv = { BASE_URL: system.baseUrl, THINK_TIME: '0', MIX: 'all', SEED_NOTES: '3', WEB_PAGES: 'required', LATENCY_SCALE: '10' };
  });

  afterAll(async () => {
    await system?.stop();
  });

  it.each(['smoke.js', 'average.js', 'stress.js', 'spike.js', 'soak.js'])(
    'when %s runs one iteration, then every check and threshold passes',
    async (script) => {
      const run = await runShim(join('load-tests', script), scenarioEnv);
      expectPassed(run);
      expect(run.output).toMatch(/create 200: \d+/);
      expect(run.output).toMatch(/metadata 200: \d+/);
      expect(run.output).toMatch(/stats 200: \d+/);
      // the web part ran too (WEB_PAGES=required): note pages and reveals, with and without a passcode
      expect(run.output).toMatch(/page 200: 2\b/);
      expect(run.output).toMatch(/reveal 200: 1\b/);
      expect(run.output).toMatch(/reveal_passcode 200: 1\b/);
    },
  );

  it('when a check fails or a threshold is crossed, then the shim exits non-zero and names them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vanish-shim-'));
    try {
      const failingCheck = join(dir, 'failing-check.mjs');
      writeFileSync(failingCheck, [
        "import http from 'k6/http';",
        "import { check } from 'k6';",
        'export default function () {',
        "  const res = http.get(`${__ENV.BASE_URL}/api/stats.php`);",
        "  check(res, { 'stats answers 418': (r) => r.status === 418 });",
        '}',
      ].join('\n'));
      const checkRun = await runShim(failingCheck, scenarioEnv);
      expect(checkRun.status).toBe(1);
      expect(checkRun.output).toContain('✗ stats answers 418');

      const crossedThreshold = join(dir, 'crossed-threshold.mjs');
      writeFileSync(crossedThreshold, [
        "import http from 'k6/http';",
        "export const options = { thresholds: { 'http_req_duration{name:stats}': ['p(99)<0'] } };",
        "export default function () { http.get(`${__ENV.BASE_URL}/api/stats.php`, { tags: { name: 'stats' } }); }",
      ].join('\n'));
      const thresholdRun = await runShim(crossedThreshold, scenarioEnv);
      expect(thresholdRun.status).toBe(99);
      expect(thresholdRun.output).toContain('✗ http_req_duration{name:stats} p(99)<0');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when smoke.js runs with --summary-export, then the export is in k6\'s layout, counts every check evaluation, and holds no uuid', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vanish-shim-'));
    try {
      const file = join(dir, 'summary.json');
      const run = await runShim(join('load-tests', 'smoke.js'), scenarioEnv, ['--no-usage-report', '--summary-export', file]);
      expectPassed(run);
      const text = readFileSync(file, 'utf8');
      // k6 writes setup()'s return value into the export as setup_data: a seed note's uuid there would be a
      // bearer secret in a report file. The scripts keep their notes in the VU.
      expect(text).not.toMatch(UUID);
      const summary = JSON.parse(text) as {
        root_group: { groups: Record<string, { checks: Record<string, { passes: number; fails: number }> }> };
        metrics: Record<string, { passes?: number; fails?: number; value?: number; thresholds?: Record<string, boolean> }>;
        setup_data?: unknown;
      };
      expect(summary.setup_data).toBeUndefined();
      // As k6 counts: every evaluation, the same number the shim prints.
      const [, passed, total] = /checks: (\d+) of (\d+) passed/.exec(run.output) ?? [];
      expect(summary.metrics.checks).toMatchObject({ passes: Number(passed), fails: 0, value: 1 });
      expect(Number(total)).toBe(Number(passed));
      expect(summary.metrics.checks.thresholds).toEqual({ 'rate==1': false });
      // the seed notes' metadata is read three times: one check name, three evaluations
      const checkNotes = summary.root_group.groups['check notes'].checks['metadata: status 200'];
      expect(checkNotes).toEqual(expect.objectContaining({ passes: 3, fails: 0 }));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when a script\'s setup() returns data, then the shim exports it as setup_data, as k6 does; an abort exits 108', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vanish-shim-'));
    try {
      const script = join(dir, 'setup-data.mjs');
      writeFileSync(script, [
        "import { check } from 'k6';",
        "export function setup() { return { seeds: ['00000000-0000-4000-8000-000000000000'] }; }",
        "export default function (data) { for (let i = 0; i < 3; i += 1) check(data, { 'has seeds': (d) => d.seeds.length === 1 }); }",
      ].join('\n'));
      const file = join(dir, 'summary.json');
      const run = await runShim(script, scenarioEnv, ['--summary-export', file]);
      expect(run.status).toBe(0);
      expect(run.output).toContain('checks: 3 of 3 passed');
      const summary = JSON.parse(readFileSync(file, 'utf8')) as { setup_data: unknown; root_group: { checks: Record<string, unknown> } };
      expect(summary.setup_data).toEqual({ seeds: ['00000000-0000-4000-8000-000000000000'] });
      expect(summary.root_group.checks['has seeds']).toEqual(expect.objectContaining({ passes: 3, fails: 0 }));

      const aborting = join(dir, 'abort.mjs');
      writeFileSync(aborting, "import exec from 'k6/execution';\nexport default function () { exec.test.abort('no seed note'); }\n");
      const abortRun = await runShim(aborting, scenarioEnv);
      expect(abortRun.status).toBe(108);
      expect(abortRun.output).toContain('no seed note');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // With a real k6 binary on PATH (it cannot be downloaded here), smoke.js also runs under k6 itself.
  const k6 = spawnSync('k6', ['version'], { encoding: 'utf8' });
  if (k6.status === 0) {
    it(`when k6 itself (${k6.stdout.trim()}) runs smoke.js, then it passes`, () => {
      // --no-usage-report: k6 otherwise sends a usage report to Grafana over the internet on every run.
      const run = spawnSync('k6', ['run', '--quiet', '--no-usage-report', join(ROOT, 'load-tests', 'smoke.js')], {
        encoding: 'utf8',
        env: { ...process.env, ...scenarioEnv, K6_NO_USAGE_REPORT: 'true' },
      });
      if (run.error) throw run.error;
      if (run.status !== 0) throw new Error(`k6 exited ${run.status} on smoke.js:\n${run.stdout}\n${run.stderr}`);
    });
  }
});

describe('the rate-limit scenario against the all-in-one system with the default limits', () => {
  let system: RunningSystem;

  beforeAll(async () => {
    system = await startSystem({});
  });

  afterAll(async () => {
    await system?.stop();
  });

  it('when rate-limits.js runs from a fresh address, then request 11 (create), 51 (view), 21 (stats) is a 429 with Retry-After', async () => {
    const run = await runShim(join('load-tests', 'rate-limits.js'), { BASE_URL: system.baseUrl });
    expectPassed(run);
    expect(run.output).toMatch(/create 200: 10\b/);
    expect(run.output).toMatch(/create 429: 2\b/);
    expect(run.output).toMatch(/metadata 200: 25\b/);
    expect(run.output).toMatch(/page 200: 25\b/);
    expect(run.output).toMatch(/stats 200: 20\b/);
  });
});

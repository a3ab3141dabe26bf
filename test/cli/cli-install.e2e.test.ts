import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { freePort, waitFor } from '@vanish/testkit/net';
import { type CommandResult, type RunningProcess, runProcess, runToEnd } from '@vanish/testkit/process';
import { CLEARED_ENV } from '../support/api-client';

/*
 * Issue 31: the CLI as a user gets it. `npm pack` of packages/cli, the tarball installed with `npm install --prefix`
 * into an empty directory outside the checkout, once with Debian's Node 20 and its npm and once with the Node
 * running the tests (24), then each installed `vanish` against the built all-in-one: create (the receipt link
 * printed), open (the text, exit 0), a second open (nothing, exit 1), a wrong key (nothing consumed), a passcode,
 * --json and --webhook, a false server's link refused, plain http:// to another host refused.
 */
const ROOT = resolve(__dirname, '../..');
const MAIN = join(ROOT, 'services/all-in-one/dist/main.js');
const NODE_20 = '/usr/bin/node';
const KEY = /#([A-Za-z0-9_-]{43})$/;

jest.setTimeout(180_000);

interface Runtime { name: string; node: string; npmCli: string }
type Result = CommandResult;

/** npm's own variables from a surrounding `npm test` would steer the child npm (its prefix, its workspace). */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !/^npm_/i.test(name) && !name.startsWith('VANISH_')) env[name] = value;
  // The receipts vanish create keeps go to this test's folder, never the user's config (DECISIONS 16).
  return { ...env, ...(work ? { VANISH_CONFIG_DIR: join(work, 'config') } : {}), ...extra };
}

function run(command: string, args: string[], options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {}): Promise<Result> {
  return runToEnd(command, args, { cwd: options.cwd, env: options.env ?? cleanEnv(), stdin: options.stdin });
}

let work: string;
let tarball: string;
let app: RunningProcess;
let base: string;
let dataDir: string;
let hooks: Server;
let hookBase: string;
const deliveries: Array<{ headers: Record<string, string | string[] | undefined>; body: string }> = [];

/** Where the lockfile puts a package and everything it depends on (nested copies first, then hoisted ones). */
function dependencyClosure(start: string): string[] {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dependencies?: Record<string, string> }> };
  const found = new Set<string>([start]);
  const walk = (location: string) => {
    for (const name of Object.keys(lock.packages[location]?.dependencies ?? {})) {
      const nested = `${location}/node_modules/${name}`;
      const at = lock.packages[nested] ? nested : `node_modules/${name}`;
      if (!lock.packages[at]) throw new Error(`package-lock.json has no ${at}`);
      if (found.has(at)) continue;
      found.add(at);
      walk(at);
    }
  };
  walk(start);
  return [...found];
}

/** The npm that comes with a node, else the machine's (/usr/bin/npm): each is run by the node under test. */
function npmOf(node: string): string {
  const own = join(dirname(node), 'npm');
  return realpathSync(existsSync(own) ? own : '/usr/bin/npm');
}

const runtimes: Runtime[] = [
  { name: 'Node 20 (/usr/bin/node)', node: NODE_20, npmCli: '' },
  { name: `Node ${process.versions.node.split('.')[0]} (the tests' node)`, node: process.execPath, npmCli: '' },
];

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm run test:e2e does)`);
  const node20 = spawnSync(NODE_20, ['--version'], { encoding: 'utf8' });
  if (!/^v20\./.test(node20.stdout ?? '')) throw new Error(`this test needs Node 20 at ${NODE_20} (found ${node20.stdout?.trim() || 'nothing'}): install Debian's or NodeSource's nodejs 20 with its npm`);
  if (Number(process.versions.node.split('.')[0]) < 24) throw new Error(`run the tests with Node 24 (found ${process.version})`);

  for (const runtime of runtimes) runtime.npmCli = npmOf(runtime.node);
  work = mkdtempSync(join(tmpdir(), 'vanish-cli-install-'));
  expect(work.startsWith(ROOT)).toBe(false);
  const packed = await run(process.execPath, [runtimes[1]!.npmCli, 'pack', '--pack-destination', work], { cwd: join(ROOT, 'packages/cli') });
  expect(packed).toMatchObject({ code: 0 });
  tarball = join(work, packed.stdout.trim().split('\n').pop()!);
  expect(tarball).toMatch(/vanish-notes-cli-[0-9.]+\.tgz$/);
  // The CLI's one dependency (tus-js-client, DECISIONS 14) and its own, packed from this checkout: the install
  // stays offline, so that what is tested is exactly what the lockfile holds.
  mkdirSync(join(work, 'deps'));
  for (const location of dependencyClosure('node_modules/tus-js-client')) {
    const dep = await run(process.execPath, [runtimes[1]!.npmCli, 'pack', '--ignore-scripts', '--pack-destination', join(work, 'deps'), join(ROOT, location)], { cwd: work });
    expect(dep).toMatchObject({ code: 0 });
  }

  hooks = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8'); });
    req.on('end', () => { deliveries.push({ headers: req.headers, body }); res.writeHead(204).end(); });
  });
  await new Promise<void>((done) => hooks.listen(0, '127.0.0.1', done));
  hookBase = `http://127.0.0.1:${(hooks.address() as AddressInfo).port}`;

  dataDir = mkdtempSync(join(tmpdir(), 'vanish-cli-install-data-'));
  const names = ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT'];
  const ports: Record<string, string> = {};
  for (const name of names) ports[name] = String(await freePort());
  base = `http://127.0.0.1:${ports.PORT}`;
  app = await runProcess({
    script: MAIN,
    env: {
      ...CLEARED_ENV, ...ports, DATA_DIR: dataDir, PUBLIC_BASE_URL: base, LOG_FORMAT: 'json', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      RATE_LIMIT_CREATE_PER_HOUR: '100000', RATE_LIMIT_VIEW_PER_HOUR: '100000', RATE_LIMIT_STATS_PER_HOUR: '100000',
    },
    readyLine: 'all-in-one ready',
    readyTimeoutMs: 60_000,
    stopTimeoutMs: 30_000,
  });
});

afterAll(async () => {
  await app?.stop();
  await new Promise<void>((done) => (hooks ? hooks.close(() => done()) : done()));
  if (work) rmSync(work, { recursive: true, force: true });
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function currentViews(uuid: string): Promise<number | 'gone'> {
  const res = await fetch(`${base}/api/view/${uuid}.php`);
  if (res.status === 404) return 'gone';
  return ((await res.json()) as { note: { current_views: number } }).note.current_views;
}

describe.each(runtimes)('the CLI installed from its tarball with $name', (runtime) => {
  let prefix: string;
  /** The installed `vanish` on PATH, found and run by that runtime's node (its `#!/usr/bin/env node`). */
  const vanish = (args: string[], stdin = '', env: Record<string, string> = {}) =>
    run(join(prefix, 'node_modules/.bin/vanish'), args, { stdin, env: cleanEnv({ ...env, PATH: `${dirname(runtime.node)}:${process.env.PATH}` }) });

  beforeAll(async () => {
    prefix = join(work, runtime.node === NODE_20 ? 'node20' : 'node-current');
    mkdirSync(prefix);
    const deps = readdirSync(join(work, 'deps')).map((name) => join(work, 'deps', name));
    const installed = await run(runtime.node, [runtime.npmCli, 'install', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball, ...deps], {
      cwd: work, env: cleanEnv({ PATH: `${dirname(runtime.node)}:${process.env.PATH}`, npm_config_cache: join(work, `cache-${dirname(runtime.node).length}`) }),
    });
    expect(installed).toMatchObject({ code: 0 });
    expect(installed.stderr).not.toMatch(/EBADENGINE|deprecated|ERR/);
    // The package and tus-js-client's own closure: nothing else was fetched or needed.
    const closure = dependencyClosure('node_modules/tus-js-client').map((location) => location.split('node_modules/').pop()!);
    expect(readdirSync(join(prefix, 'node_modules')).filter((name) => !name.startsWith('.')).sort()).toEqual(['@vanish-notes', ...closure].sort());
    const which = await run('sh', ['-c', 'node --version'], { env: cleanEnv({ PATH: `${dirname(runtime.node)}:${process.env.PATH}` }) });
    expect(which.stdout.trim()).toBe(spawnSync(runtime.node, ['--version'], { encoding: 'utf8' }).stdout.trim());
  });

  it('when a note is created, then the link alone is on stdout and the receipt link with its warning on stderr; open prints the text and exits 0; a second open prints nothing and exits 1', async () => {
    const text = `launch code ${runtime.name} ✈️\nsecond line`;
    const created = await vanish(['create', '--server', base], text);
    expect(created.code).toBe(0);
    const link = created.stdout.trim();
    expect(link).toMatch(new RegExp(`^${base}/[0-9a-f-]{36}#[A-Za-z0-9_-]{43}$`));
    const receipt = new RegExp(`Your receipt: keep this, do not share it\\n(${base}/r/[A-Za-z0-9_-]{43})\\n`).exec(created.stderr);
    expect(receipt).not.toBeNull();
    expect((await fetch(receipt![1]!)).status).toBe(200);

    const opened = await vanish(['open', link]);
    expect(opened).toEqual({ code: 0, stdout: text, stderr: '' });
    expect(await currentViews(link.slice(base.length + 1, base.length + 37))).toBe('gone');

    const again = await vanish(['open', link]);
    expect(again).toMatchObject({ code: 1, stdout: '' });
    expect(again.stderr).toContain('there is no note at this link');
  });

  it('when the key is wrong, then nothing is consumed; with the right key and the passcode from the environment, the note opens', async () => {
    const pin = join(work, `pin-${prefix.length}`);
    writeFileSync(pin, 'open sesame\n');
    const created = await vanish(['create', '--server', base, '--views', '2', '--passcode-file', pin], 'behind a passcode');
    expect(created.code).toBe(0);
    const link = created.stdout.trim();
    const uuid = link.slice(base.length + 1, base.length + 37);
    const wrong = link.replace(KEY, `#${'A'.repeat(43)}`);
    const refused = await vanish(['open', wrong], '', { VANISH_PASSCODE: 'open sesame' });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toContain('its key is missing or does not match');
    await expect(vanish(['open', link], '', { VANISH_PASSCODE: 'wrong' })).resolves.toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('Wrong passcode') });
    expect(await currentViews(uuid)).toBe(0);
    await expect(vanish(['open', '-'], `${link}\n`, { VANISH_PASSCODE: 'open sesame' })).resolves.toEqual({ code: 0, stdout: 'behind a passcode', stderr: '' });
    expect(await currentViews(uuid)).toBe(1);
  });

  it('when --json and --webhook are given, then every field of the answer is printed and the webhook receives the read, signed with the printed secret', async () => {
    const created = await vanish(['create', '--server', base, '--json', '--webhook', `${hookBase}/${prefix.length}`], 'watched');
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(created.stdout) as Record<string, unknown> & { link: string; key: string; uuid: string; note_ref: string; webhook_secret: string };
    expect(Object.keys(out).sort()).toEqual(['expires_at', 'has_passcode', 'key', 'link', 'max_views', 'note_ref', 'receipt_url', 'success', 'url', 'uuid', 'webhook_secret']);
    expect(out.link).toBe(`${base}/${out.uuid}#${out.key}`);
    expect(out.receipt_url).toMatch(new RegExp(`^${base}/r/`));

    await expect(vanish(['open', out.link])).resolves.toMatchObject({ code: 0, stdout: 'watched' });
    const delivery = await waitFor(() => deliveries.find((d) => d.body.includes(out.note_ref) && d.body.includes('note.accessed')), { timeoutMs: 30_000, description: 'the note.accessed delivery' });
    const secret = Buffer.from(out.webhook_secret.slice('whsec_'.length), 'base64');
    const signed = `${String(delivery.headers['webhook-id'])}.${String(delivery.headers['webhook-timestamp'])}.${delivery.body}`;
    expect(String(delivery.headers['webhook-signature']).split(' ')).toContain(`v1,${createHmac('sha256', secret).update(signed).digest('base64')}`);
  });

  it('when verify-site checks the running service with no --manifest, then the manifest packed into the tarball (the CLI\'s own version) matches it; receipts list shows the notes made here', async () => {
    const checked = await vanish(['verify-site', base]);
    expect(checked).toMatchObject({ code: 0, stdout: expect.stringMatching(/^OK: http:\/\/127\.0\.0\.1:\d+ serves exactly the assets of vanish \d+\.\d+\.\d+ /) });
    const listed = await vanish(['receipts', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^ended, views used 1 of 1, /m);
  });

  it('when a false server answers a link to another origin, then nothing with a key is printed; plain http:// to another host is refused', async () => {
    const liar = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        success: true, uuid: '9b2d3f0a-1c2e-4d5f-8a9b-0c1d2e3f4a5b', url: 'https://attacker.example/9b2d3f0a-1c2e-4d5f-8a9b-0c1d2e3f4a5b',
        expires_at: '2026-12-01T00:00:00.000Z', max_views: 1, has_passcode: false, receipt_url: 'https://attacker.example/r/wjV_NgILwDxGPQWLkP_1QJYkBnCQroG1nWpLuifQS3c',
      }));
    });
    await new Promise<void>((done) => liar.listen(0, '127.0.0.1', done));
    try {
      const result = await vanish(['create', '--server', `http://127.0.0.1:${(liar.address() as AddressInfo).port}`], 'for the liar');
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain('printed no link and no key');
      expect(result.stderr).not.toMatch(/#[A-Za-z0-9_-]{43}/);
    } finally {
      await new Promise<void>((done) => liar.close(() => done()));
    }
    await expect(vanish(['create', '--server', 'http://vanish.example'], 'x')).resolves.toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('refusing plain http://') });
  });

  it('when a note carries files (DECISIONS 14), then the installed vanish uploads them and writes them back byte for byte with --out', async () => {
    const dir = mkdtempSync(join(work, 'files-'));
    const original = randomBytes(200_000);
    writeFileSync(join(dir, 'data.bin'), original);
    writeFileSync(join(dir, 'empty'), '');
    const created = await vanish(['create', '--server', base, '--attach', join(dir, 'data.bin'), '--attach', join(dir, 'empty')], 'with two files');
    expect(created.code).toBe(0);
    const out = join(dir, 'out');
    const opened = await vanish(['open', '--out', out, created.stdout.trim()]);
    expect(opened).toMatchObject({ code: 0, stdout: 'with two files' });
    expect(readFileSync(join(out, 'data.bin')).equals(original)).toBe(true);
    expect(readFileSync(join(out, 'empty')).length).toBe(0);
  });

  it('when the installed envelope, file format and requests\' sealing (DECISIONS 15) are compared with what the server serves at /assets/, then they are the same bytes', async () => {
    for (const name of ['envelope.js', 'file-stream.js', 'request-seal.js']) {
      const served = Buffer.from(await (await fetch(`${base}/assets/${name}`)).arrayBuffer());
      expect(readFileSync(join(prefix, `node_modules/@vanish-notes/cli/lib/${name}`)).equals(served)).toBe(true);
    }
  });
});

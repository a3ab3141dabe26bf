// The README's `npm install` and `npm start` as a user with an older Node runs them: the machine's own
// /usr/bin/node (v20, as Debian and Ubuntu ship it), with its npm, in a fresh copy of the repository (every
// file git tracks or would track, no node_modules, no dist). Without the guard, `npm install` passed with
// EBADENGINE warnings and `npm start` built for a minute and died with a TypeError inside undici.
// Then the same with Node 24 (the node running this test): the install is accepted and `npm start` answers.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from '@vanish/testkit/net';
import { CLEARED_ENV } from './support/api-client';

const ROOT = path.resolve(__dirname, '..');
// The older Node a new user meets; VANISH_OLD_NODE names another one.
const OLD_NODE = process.env.VANISH_OLD_NODE ?? '/usr/bin/node';
const REQUIRED_MAJOR = Number(/(\d+)/.exec((require(path.join(ROOT, 'package.json')) as { engines: { node: string } }).engines.node)![1]);
// npm's own lines around a failed script (the command echo, `npm error ...`): not what the user must read.
const NPM_FRAME = /^(> |npm (error|ERR!|warn|notice)|\s*$)/;

jest.setTimeout(5 * 60_000);

interface Result { code: number | null; output: string; stderr: string; ms: number }

/** Only PATH decides which node and npm run; nothing of the npm that started jest leaks in. */
function envWithNodeFrom(binDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...CLEARED_ENV, PATH: `${binDir}:/usr/bin:/bin` };
  for (const name of Object.keys(env)) if (/^npm_/i.test(name) || env[name] === undefined) delete env[name];
  return env;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<Result> {
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); stderr += chunk.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => { clearTimeout(timer); reject(err); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, output, stderr, ms: Date.now() - startedAt }); });
  });
}

/** A fresh copy of the repository as a clone of this working tree would be (with the uncommitted changes). */
function freshCopy(): string {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  const copy = mkdtempSync(path.join(tmpdir(), 'vanish-node-version-'));
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (!existsSync(path.join(ROOT, file))) continue; // deleted in the working tree
    mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
    copyFileSync(path.join(ROOT, file), path.join(copy, file));
  }
  return copy;
}

describe(`the README's commands on a Node older than ${REQUIRED_MAJOR}`, () => {
  let copy: string;
  let oldEnv: NodeJS.ProcessEnv;
  let oldVersion: string;

  beforeAll(() => {
    const version = spawnSync(OLD_NODE, ['--version'], { encoding: 'utf8' });
    if (version.status !== 0) throw new Error(`${OLD_NODE} does not run: this test needs an older Node there (apt-get install nodejs), or VANISH_OLD_NODE=/path/to/node`);
    oldVersion = version.stdout.trim();
    if (Number(oldVersion.slice(1).split('.')[0]) >= REQUIRED_MAJOR) throw new Error(`${OLD_NODE} is ${oldVersion}, not older than ${REQUIRED_MAJOR}: set VANISH_OLD_NODE to an older node`);
    oldEnv = envWithNodeFrom(path.dirname(OLD_NODE));
    copy = freshCopy();
  });

  afterAll(() => {
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('npm install stops before it installs anything, naming the version required and the one found', async () => {
    const result = await run('npm', ['install'], copy, oldEnv);
    console.log(`npm install on ${oldVersion}: exit ${result.code} after ${result.ms} ms`);
    expect(result.code).not.toBe(0);
    expect(result.output).toContain('EBADENGINE');
    expect(result.output).toContain(`Required: {"node":">=${REQUIRED_MAJOR}"}`);
    expect(result.output).toMatch(new RegExp(`Actual: +\\{"node":"${oldVersion.replace(/\./g, '\\.')}"`));
    // Nothing was downloaded or linked: the stop came first, not after a minute of installing.
    expect(existsSync(path.join(copy, 'node_modules'))).toBe(false);
    expect(result.ms).toBeLessThan(60_000); // a bound that catches an install, not a speed goal
  });

  it.each(['start', 'test', 'run bench'])('npm %s stops at once with one line: the version needed, the one found, how to get it', async (command) => {
    const args = command.split(' ');
    const result = await run('npm', args, copy, oldEnv);
    console.log(`npm ${args.join(' ')} on ${oldVersion}: exit ${result.code} after ${result.ms} ms`);
    expect(result.code).not.toBe(0);
    const ours = result.stderr.split('\n').filter((line) => !NPM_FRAME.test(line));
    expect(ours).toEqual([expect.stringContaining(`vanish needs Node.js ${REQUIRED_MAJOR} or newer, but this is Node.js ${oldVersion.slice(1)}`)]);
    expect(ours[0]).toContain('.nvmrc');
    expect(ours[0]).toContain('nvm install');
    expect(ours[0]).toContain('docker run -p 8080:8080 -v vanish-data:/data');
    expect(result.output).not.toMatch(/TypeError|^\s+at /m);
    // Stopped before the build: nothing was compiled.
    expect(existsSync(path.join(copy, 'services', 'all-in-one', 'dist'))).toBe(false);
    expect(result.ms).toBeLessThan(60_000);
  });
});

describe(`the README's commands on Node ${process.versions.node} (the node running this test)`, () => {
  const newEnv = envWithNodeFrom(path.dirname(process.execPath));

  it('npm install accepts this Node (checked as a dry run of the fresh copy: the real install is this checkout\'s)', async () => {
    const copy = freshCopy();
    try {
      const result = await run('npm', ['install', '--dry-run', '--offline', '--ignore-scripts'], copy, newEnv);
      expect({ code: result.code, output: result.output }).toEqual({ code: 0, output: expect.not.stringContaining('EBADENGINE') });
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('npm start passes the check, builds and answers on its port', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-node-version-data-'));
    const env: NodeJS.ProcessEnv = { ...newEnv, DATA_DIR: dataDir, LOG_FORMAT: 'json' };
    for (const name of ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT']) {
      env[name] = String(await freePort());
    }
    // In its own process group, so the npm, the shell and the node under it all stop together.
    const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
    try {
      const answer = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${env.PORT}/api/stats.php`).catch(() => undefined);
        return res?.status === 200 ? res : undefined;
      }, { timeoutMs: 180_000, intervalMs: 500, description: `npm start answering on ${env.PORT}` }).catch((err: Error) => {
        throw new Error(`${err.message}\n${output.slice(-3000)}`);
      });
      expect(answer.status).toBe(200);
      expect(output).not.toContain('vanish needs Node.js');
    } finally {
      try { process.kill(-child.pid!, 'SIGINT'); } catch { /* already gone */ }
      const timer = setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }, 30_000);
      await exited;
      clearTimeout(timer);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from '@vanish/testkit/net';
import { parseJsonLines } from '@vanish/testkit/strict-json';
import { CLEARED_ENV } from './support/api-client';

// Every way a process ends leaves its last line in the file its stdout and stderr were redirected
// to (as a container runtime or `node main.js >log 2>&1` does), and every line is strict JSON.
// Needs `npm run build` first (npm test does).
const ROOT = path.resolve(__dirname, '..');
const STATS = path.join(ROOT, 'services', 'stats', 'dist', 'main.js');
const FIXTURE = path.join(__dirname, 'support', 'exit-paths.fixture.js');

jest.setTimeout(120_000);

interface Ended { code: number | null; signal: NodeJS.Signals | null }
interface Run { child: ChildProcess; exited: Promise<Ended>; lines(): Array<Record<string, unknown>>; text(): string }

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function runToFile(script: string, args: string[], env: Record<string, string | undefined> = {}): Run {
  const dir = mkdtempSync(path.join(tmpdir(), 'vanish-exit-logs-'));
  dirs.push(dir);
  const file = path.join(dir, 'out.log');
  const fd = openSync(file, 'a');
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...CLEARED_ENV, DATA_DIR: dir, ...env })) if (value !== undefined) merged[key] = value;
  const child = spawn(process.execPath, [script, ...args], { env: merged, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  children.push(child);
  const exited = new Promise<Ended>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const text = () => readFileSync(file, 'utf8');
  return { child, exited, text, lines: () => parseJsonLines(text()) };
}

const messages = (run: Run) => run.lines().map((line) => line.msg);

describe('the last line before exit reaches the file', () => {
  beforeAll(() => {
    for (const script of [STATS, path.join(ROOT, 'packages', 'common', 'dist', 'index.js')]) {
      if (!existsSync(script)) throw new Error(`${script} is missing: run \`npm run build\` first (npm test does)`);
    }
  });

  it.each([
    ['uncaught-exception', 'uncaught exception', /thrown outside any handler/],
    ['unhandled-rejection', 'unhandled rejection', /rejected with nobody waiting/],
    ['grace-exceeded', 'shutdown exceeded its grace period', /^/],
  ])('when the process ends by %s right after 2000 lines, then every line is there in order, and its own last line', async (how, lastMessage, detail) => {
    const run = runToFile(FIXTURE, [how, '2000']);
    expect(await run.exited).toEqual({ code: 1, signal: null });
    const lines = run.lines();
    const burst = lines.filter((line) => line.msg === 'burst').map((line) => line.i);
    expect(burst).toEqual(Array.from({ length: 2000 }, (_, i) => i));
    const tail = lines.slice(-3).map((line) => line.msg);
    expect(tail.slice(-1)).toEqual([lastMessage]);
    expect(tail).toContain('last line before exit');
    expect(JSON.stringify(lines.at(-1))).toMatch(detail);
    expect(lines.at(-1)!.level).toBe('error');
  });

  it('when the process is SIGKILLed with its event loop blocked right after 2000 lines, then every line it logged is in the file', async () => {
    const marker = path.join(mkdtempSync(path.join(tmpdir(), 'vanish-exit-marker-')), 'blocked');
    dirs.push(path.dirname(marker));
    const run = runToFile(FIXTURE, ['blocked-then-killed', '2000', marker]);
    await waitFor(() => existsSync(marker), { timeoutMs: 60_000, description: 'the fixture blocking its event loop' });
    run.child.kill('SIGKILL');
    expect(await run.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const lines = run.lines();
    expect(lines.filter((line) => line.msg === 'burst')).toHaveLength(2000);
    expect(lines.at(-1)!.msg).toBe('last line before exit');
  });

  it('when SIGTERM arrives before a Lifecycle handles signals (start-up), then every line is there and the last says so; exit 143 as the signal would', async () => {
    const run = runToFile(FIXTURE, ['signal-during-start-up', '2000']);
    expect(await run.exited).toEqual({ code: 143, signal: null });
    const lines = run.lines();
    expect(lines.filter((line) => line.msg === 'burst')).toHaveLength(2000);
    expect(lines.at(-1)).toMatchObject({ level: 'info', signal: 'SIGTERM', msg: 'stopped before start-up finished' });
  });

  describe('stats as a separate process', () => {
    const statsEnv = async () => ({ PORT: String(await freePort()), ADMIN_PORT: String(await freePort()), LOG_LEVEL: 'info' });

    it.each(['SIGTERM', 'SIGINT'] as const)('when it gets %s after start-up, then it logs the shutdown and its end, and exits 0', async (signal) => {
      const env = await statsEnv();
      const run = runToFile(STATS, [], env);
      await waitFor(async () => (await fetch(`http://127.0.0.1:${env.ADMIN_PORT}/readyz`).catch(() => undefined))?.ok === true, { timeoutMs: 60_000, description: 'stats ready' });
      run.child.kill(signal);
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(messages(run)).toContain('stats service started');
      expect(messages(run).slice(-2)).toEqual(['shutting down', 'stopped']);
      expect(run.lines().at(-1)).toMatchObject({ level: 'info', service: 'stats', signal });
    });

    describe('while start-up waits for a database that never answers', () => {
      let silent: Server;
      const held: Socket[] = [];
      beforeAll(async () => {
        silent = createServer((socket) => { held.push(socket); });
        await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      });
      afterAll(async () => {
        for (const socket of held) socket.destroy();
        await new Promise((resolve) => silent.close(resolve));
      });

      it('when SIGTERM arrives, then it logs the shutdown and its end, and exits 0', async () => {
        const port = (silent.address() as { port: number }).port;
        const run = runToFile(STATS, [], { ...(await statsEnv()), DATABASE_URL: `mysql://root@127.0.0.1:${port}/never` });
        await waitFor(() => held.length > 0, { timeoutMs: 60_000, description: 'stats connecting to the silent database' });
        run.child.kill('SIGTERM');
        expect(await run.exited).toEqual({ code: 0, signal: null });
        expect(messages(run).slice(-2)).toEqual(['shutting down', 'stopped']);
      });
    });

    it('when its configuration is refused, then the problems are one JSON error line, the last, and it exits 1', async () => {
      const run = runToFile(STATS, [], { ...(await statsEnv()), DATABASE_URL: 'postgres://nope' });
      expect(await run.exited).toEqual({ code: 1, signal: null });
      const lines = run.lines();
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 'error', service: 'stats', msg: 'stats failed to start' });
      expect(JSON.stringify(lines[0]!.problems)).toMatch(/DATABASE_URL/);
    });

    it('when start-up fails (its port is taken), then the failure is the last line, JSON, and it exits 1', async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      try {
        const run = runToFile(STATS, [], { ...(await statsEnv()), HOST: '127.0.0.1', PORT: String((taken.address() as { port: number }).port) });
        expect(await run.exited).toEqual({ code: 1, signal: null });
        expect(run.lines().at(-1)).toMatchObject({ level: 'error', service: 'stats', code: 'EADDRINUSE', variable: 'PORT' });
        expect(String(run.lines().at(-1)!.msg)).toMatch(/^stats failed to start: PORT: port \d+ is already in use/);
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    });
  });
});

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@vanish/testkit/net';
import { parseJsonLines } from '@vanish/testkit/strict-json';
import { CLEARED_ENV } from './support/api-client';

// A port someone else already holds, met as an operator meets it: the built process (the all-in-one of
// `npm start`, or one service on its own) ends at once, non-zero, on one line that names the variable to
// change, the address and the port, and says what to do; no stack. Needs `npm run build` first.
const ROOT = path.resolve(__dirname, '..');
const MAIN = (service: string) => path.join(ROOT, 'services', service, 'dist', 'main.js');
const ALL_IN_ONE_PORTS = ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT'];

jest.setTimeout(120_000);

const dirs: string[] = [];
const holders: Server[] = [];
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await Promise.all(holders.map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Another program on 127.0.0.1:port, as a second `npm start` or a forgotten dev server would be. */
async function holdPort(): Promise<number> {
  const server = createServer();
  holders.push(server);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve());
  });
  return (server.address() as { port: number }).port;
}

interface Ended { code: number | null; output: string; elapsedMs: number }

function run(script: string, env: Record<string, string>): Promise<Ended> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-port-in-use-'));
  dirs.push(dataDir);
  const merged: Record<string, string> = {};
  for (const [key, value] of Object.entries({ ...process.env, ...CLEARED_ENV, LOG_FORMAT: undefined, LOG_LEVEL: undefined, NODE_ENV: 'development', DATA_DIR: dataDir, HOST: '127.0.0.1', ...env })) {
    if (value !== undefined) merged[key] = value;
  }
  const started = Date.now();
  const child = spawn(process.execPath, [script], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => child.on('close', (code) => {
    clearTimeout(timer);
    resolve({ code, output, elapsedMs: Date.now() - started });
  }));
}

async function freePorts(names: string[]): Promise<Record<string, string>> {
  const ports: Record<string, string> = {};
  for (const name of names) ports[name] = String(await freePort());
  return ports;
}

function expectOneClearLine(ended: Ended, variable: string, port: number): void {
  expect(ended.code).toBe(1);
  const lines = parseJsonLines(ended.output);
  const last = lines.at(-1)!;
  expect(last).toMatchObject({ level: 'error', code: 'EADDRINUSE', variable, address: '127.0.0.1', port });
  expect(String(last.msg)).toMatch(new RegExp(
    `failed to start: ${variable}: port ${port} is already in use on 127\\.0\\.0\\.1 \\(EADDRINUSE\\): set ${variable} to a free port, or stop what holds 127\\.0\\.0\\.1:${port}$`,
  ));
  expect(last).not.toHaveProperty('stack');
  // Nothing else on the way out names the refusal the old way (a stack or Node's own "Unhandled 'error'").
  expect(ended.output).not.toMatch(/setupListenHandle|Unhandled 'error'/);
}

beforeAll(() => {
  for (const service of ['all-in-one', 'gateway', 'notes', 'stats', 'mailer', 'webhooks']) {
    if (!existsSync(MAIN(service))) throw new Error(`${MAIN(service)} is missing: run \`npm run build\` first (npm test does)`);
  }
});

describe('npm start (the all-in-one) with one of its ports taken', () => {
  it.each(['NOTES_PORT', 'STATS_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT', 'PORT'])(
    'when %s is held by another program, then it exits 1 with one line naming that variable, the address and the port, and no stack',
    async (variable) => {
      const held = await holdPort();
      const ports = { ...(await freePorts(ALL_IN_ONE_PORTS)), [variable]: String(held) };
      const ended = await run(MAIN('all-in-one'), { ...ports, LOG_FORMAT: 'json' });
      expectOneClearLine(ended, variable, held);
    },
  );

  it('when a person runs it at a terminal (readable lines), then the error is that same one line, with no stack', async () => {
    const held = await holdPort();
    const ports = { ...(await freePorts(ALL_IN_ONE_PORTS)), MAILER_PORT: String(held) };
    const ended = await run(MAIN('all-in-one'), { ...ports, LOG_FORMAT: 'pretty' });
    expect(ended.code).toBe(1);
    const errors = ended.output.split('\n').filter((line) => line.includes('ERROR'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`all-in-one failed to start: MAILER_PORT: port ${held} is already in use on 127.0.0.1 (EADDRINUSE): set MAILER_PORT to a free port`);
    expect(ended.output).not.toMatch(/stack|    at /);
  });
});

describe('a service on its own with its port taken', () => {
  it.each([
    ['gateway', 'PORT'], ['gateway', 'ADMIN_PORT'],
    ['notes', 'PORT'], ['notes', 'ADMIN_PORT'],
    ['stats', 'PORT'], ['mailer', 'ADMIN_PORT'],
    ['webhooks', 'ADMIN_PORT'],
  ])('when the %s service\'s %s is held, then it exits 1 with one line naming that variable', async (service, variable) => {
    const held = await holdPort();
    const ports = { ...(await freePorts(['PORT', 'ADMIN_PORT'])), [variable]: String(held), ADMIN_HOST: '127.0.0.1' };
    const ended = await run(MAIN(service), ports);
    expectOneClearLine(ended, variable, held);
  });
});

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from '@vanish/testkit/net';
import { parseJsonLines } from '@vanish/testkit/strict-json';
import { CLEARED_ENV } from './support/api-client';

// `npm start` as a person runs it, in a terminal, and as a pipe or a container runs it. The terminal is a
// real pseudo-terminal: util-linux `script` runs the all-in-one on one and copies what it shows to our
// stdout; what we write to script's stdin is typed at that terminal (so \x03 is a real Ctrl-C, turned
// into SIGINT by the terminal's line discipline). The e2e project needs `npm run build` first.
const MAIN = path.resolve(__dirname, '..', 'services', 'all-in-one', 'dist', 'main.js');
const PORT_NAMES = ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT'];
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

jest.setTimeout(120_000);

interface Session { child: ChildProcessWithoutNullStreams; output: () => string; stdout: () => string; exited: Promise<number | null> }

async function start(extraEnv: Record<string, string>, terminal: boolean): Promise<Session & { gateway: string; dataDir: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-first-run-'));
  const env: Record<string, string | undefined> = { ...process.env, ...CLEARED_ENV, NODE_ENV: 'development', DATA_DIR: dataDir, ...extraEnv };
  for (const name of PORT_NAMES) env[name] = String(await freePort());
  delete env.LOG_FORMAT;
  delete env.LOG_LEVEL;
  Object.assign(env, extraEnv);
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const command = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(MAIN)}`;
  const child = terminal
    ? spawn('script', ['-qfec', command, '/dev/null'], { env: { ...env, TERM: 'xterm' } as NodeJS.ProcessEnv })
    : spawn('bash', ['-c', command], { env: env as NodeJS.ProcessEnv });
  let output = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); stdout += chunk.toString(); });
  child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => output, stdout: () => stdout, exited, gateway: `http://127.0.0.1:${env.PORT}`, dataDir };
}

async function stopped(session: Session, how: () => void): Promise<number | null> {
  how();
  const timer = setTimeout(() => session.child.kill('SIGKILL'), 60_000);
  try {
    return await session.exited;
  } finally {
    clearTimeout(timer);
  }
}

describe('npm start at a terminal', () => {
  it('shows a banner with the URL, where the data and keys are, the defaults, no JSON; Ctrl-C stops with one line', async () => {
    const session = await start({}, true);
    try {
      await waitFor(() => session.output().includes('Ctrl-C stops'), { timeoutMs: 60_000, intervalMs: 200, description: 'the banner' });
      const port = new URL(session.gateway).port;
      const shown = session.output().replace(ANSI, '');
      expect(shown).toContain(`vanish is running: open http://localhost:${port}/`);
      expect(shown).toContain(`data:     ${session.dataDir}`);
      expect(shown).toContain(`back up:  ${path.join(session.dataDir, 'keys')}`);
      expect(shown).toContain('SQLite for notes, stats, mailer');
      expect(shown).toContain('in-memory rate limits');
      expect(shown).toContain(`e-mails written as files to ${path.join(session.dataDir, 'outbox')}`);
      // Requests are debug lines at a terminal: one made now does not show.
      const res = await fetch(`${session.gateway}/api/stats.php`);
      expect(res.status).toBe(200);
      const lines = session.output().replace(ANSI, '').split(/\r?\n/).filter((line) => line.trim() !== '');
      for (const line of lines) expect(line.trim().startsWith('{')).toBe(false);
      expect(lines.some((line) => line.includes('/api/stats.php'))).toBe(false);

      const before = session.output().length;
      const code = await stopped(session, () => session.child.stdin.write('\x03'));
      expect(code).toBe(0);
      const afterCtrlC = session.output().slice(before).replace(ANSI, '').split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== '' && line !== '^C');
      expect(afterCtrlC).toHaveLength(1);
      expect(afterCtrlC[0]).toMatch(/INFO: stopped/);
    } finally {
      session.child.kill('SIGKILL');
      rmSync(session.dataDir, { recursive: true, force: true });
    }
  });

  it('LOG_FORMAT=json keeps JSON lines even at a terminal', async () => {
    const session = await start({ LOG_FORMAT: 'json' }, true);
    try {
      await waitFor(() => session.output().includes('all-in-one ready'), { timeoutMs: 60_000, intervalMs: 200, description: 'the ready line' });
      await stopped(session, () => session.child.stdin.write('\x03'));
      // The terminal turns \n into \r\n and echoes ^C; what is left is the process's own lines.
      const text = session.output().replace(/\r\n/g, '\n').replace(/^\^C/gm, '');
      expect(parseJsonLines(text).length).toBeGreaterThan(3);
    } finally {
      session.child.kill('SIGKILL');
      rmSync(session.dataDir, { recursive: true, force: true });
    }
  });
});

describe('npm start with stdout piped (containers, CI, a log shipper)', () => {
  it('writes only strict JSON lines, requests at info, and no banner', async () => {
    const session = await start({}, false);
    try {
      await waitFor(() => session.output().includes('all-in-one ready'), { timeoutMs: 60_000, intervalMs: 200, description: 'the ready line' });
      const res = await fetch(`${session.gateway}/api/stats.php`);
      expect(res.status).toBe(200);
      await waitFor(() => session.output().includes('"route":"/api/stats.php"'), { timeoutMs: 10_000, description: 'the request line' });
      const code = await stopped(session, () => session.child.kill('SIGINT'));
      expect(code).toBe(0);
      // stdout only: Node's own warnings go to stderr, which no log line is written to.
      const lines = parseJsonLines(session.stdout());
      expect(session.output()).not.toContain('vanish is running');
      expect(lines.find((line) => line.msg === 'request' && line.route === '/api/stats.php')?.level).toBe('info');
      expect(lines.at(-1)).toMatchObject({ msg: 'stopped', signal: 'SIGINT' });
    } finally {
      session.child.kill('SIGKILL');
      rmSync(session.dataDir, { recursive: true, force: true });
    }
  });
});

// Issue 32 (outside review): keys are generated only into a folder with no data at all; a key file missing or
// unreadable beside existing data stops the start with a message naming it; data and key files are the user's alone.
describe('npm start with data already in DATA_DIR', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-kept-data-'));
  const keysDir = path.join(dataDir, 'keys');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  async function startOnce(whileRunning: () => void = () => undefined): Promise<{ code: number | null; output: string }> {
    const session = await start({ DATA_DIR: dataDir, LOG_FORMAT: 'json' }, false);
    rmSync(session.dataDir, { recursive: true, force: true });
    try {
      const ready = await Promise.race([
        waitFor(() => session.output().includes('all-in-one ready'), { timeoutMs: 60_000, intervalMs: 200, description: 'the ready line' }).then(() => true),
        session.exited.then(() => false),
      ]);
      if (!ready) return { code: await session.exited, output: session.output() };
      const created = await fetch(`${session.gateway}/api/create.php`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'kept', expiry_type: 'view', max_views: 1 }) });
      expect(created.status).toBe(200);
      whileRunning();
      return { code: await stopped(session, () => session.child.kill('SIGINT')), output: session.output() };
    } finally {
      session.child.kill('SIGKILL');
    }
  }

  it('when it first starts, then every key and database file (with -wal and -shm) is 0600, the keys folder 0700, and no key id is k1', async () => {
    // SQLite removes -wal and -shm when it closes: they are looked at while it runs.
    const modesOf = () => readdirSync(dataDir).filter((name) => /\.db(-wal|-shm)?$/.test(name))
      .map((file) => ({ file, mode: (statSync(path.join(dataDir, file)).mode & 0o777).toString(8) }));
    let whileRunning: Array<{ file: string; mode: string }> = [];
    expect(await startOnce(() => { whileRunning = modesOf(); })).toMatchObject({ code: 0 });
    expect(whileRunning.map((entry) => entry.file)).toEqual(expect.arrayContaining(['notes.db', 'notes.db-wal', 'notes.db-shm', 'mailer.db', 'stats.db', 'webhooks.db']));
    expect(whileRunning.filter((entry) => entry.mode !== '600')).toEqual([]);
    expect(statSync(keysDir).mode & 0o777).toBe(0o700);
    const keyFiles = readdirSync(keysDir);
    expect(keyFiles).toEqual(expect.arrayContaining(['master_keys.txt', 'lookup_key.txt', 'receipt_signing_keys.txt', 'mail_private_keys.txt', 'webhook_private_keys.txt']));
    for (const file of keyFiles) {
      expect({ file, mode: (statSync(path.join(keysDir, file)).mode & 0o777).toString(8) }).toEqual({ file, mode: '600' });
      expect(readFileSync(path.join(keysDir, file), 'utf8')).not.toMatch(/(^|,)k1:/);
    }
  });

  it('when one key file is missing, then the start stops naming it and what to restore, and makes no key', async () => {
    const file = path.join(keysDir, 'master_keys.txt');
    const saved = readFileSync(file);
    rmSync(file);
    try {
      const run = await startOnce();
      expect(run.code).not.toBe(0);
      expect(run.output).toContain(`MASTER_KEYS: the key file ${file} is missing, but ${dataDir} already holds data`);
      expect(run.output).toContain(`Restore it from your backup of ${keysDir}, or set MASTER_KEYS`);
      expect(run.output).not.toContain('all-in-one ready');
      expect(existsSync(file)).toBe(false);
    } finally {
      writeFileSync(file, saved, { mode: 0o600 });
    }
  });

  it('when a key file is corrupt, then the start stops naming it', async () => {
    const file = path.join(keysDir, 'receipt_signing_keys.txt');
    const saved = readFileSync(file);
    writeFileSync(file, 'r1:not-a-key\n');
    try {
      const run = await startOnce();
      expect(run.code).not.toBe(0);
      expect(run.output).toContain(`RECEIPT_SIGNING_KEYS: the key file ${file} cannot be read`);
    } finally {
      writeFileSync(file, saved, { mode: 0o600 });
    }
  });

  it('when the whole keys folder is missing beside the databases, then the start stops and creates no keys folder', async () => {
    const moved = `${keysDir}.bak`;
    renameSync(keysDir, moved);
    try {
      const run = await startOnce();
      expect(run.code).not.toBe(0);
      expect(run.output).toContain(`MASTER_KEYS: the key file ${path.join(keysDir, 'master_keys.txt')} is missing, but ${dataDir} already holds data (notes.db)`);
      expect(existsSync(keysDir)).toBe(false);
    } finally {
      renameSync(moved, keysDir);
    }
    expect(await startOnce()).toMatchObject({ code: 0 });
  });
});

import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Issue 32: `npm run takedown` run from another folder than the server's DATA_DIR generated six keys and
// an empty notes.db there, then printed the failing SQL with the note's lookup hash. It must refuse, create
// nothing, say which DATA_DIR or DATABASE_URL it looked at, and print nothing derived from the link.
// The e2e project needs `npm run build` first.
const TAKEDOWN = path.resolve(__dirname, '..', '..', 'services', 'notes', 'dist', 'cli', 'takedown.js');

jest.setTimeout(60_000);

interface Run { code: number; output: string }

function takedown(args: string[], env: Record<string, string>, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [TAKEDOWN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', NODE_ENV: 'development', ...env }, timeout: 45_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

/** Nothing a bearer id could be read back from: the uuid in any spelling, or a long hex or base64 run (a hash). */
function expectNoSecret(output: string, uuid: string): void {
  expect(output).not.toContain(uuid);
  expect(output).not.toContain(uuid.replace(/-/g, ''));
  expect(output).not.toMatch(/[0-9a-f]{32,}/i);
  expect(output).not.toMatch(/[A-Za-z0-9+/_-]{40,}/);
  expect(output).not.toMatch(/select|delete|update|insert/i);
}

const ring = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('npm run takedown against the wrong folder', () => {
  let dir: string;
  beforeEach(() => { dir = mkdtempSync(path.join(tmpdir(), 'vanish-takedown-')); });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('when DATA_DIR holds no notes database, then it refuses naming the file and DATA_DIR, creates no key and no database, and prints no hash', async () => {
    const uuid = randomUUID();
    const run = await takedown([`https://notes.example.com/${uuid}`], { DATA_DIR: dir }, dir);
    expect(run.code).toBe(3);
    expect(run.output).toContain(`takedown failed: the notes database ${path.join(dir, 'notes.db')} (DATA_DIR=${dir}) does not exist`);
    expect(run.output).toContain('with the server\'s own DATA_DIR or DATABASE_URL');
    expect(readdirSync(dir)).toEqual([]);
    expectNoSecret(run.output, uuid);
  });

  it('when DATA_DIR is unset and the folder it is run from has no data, then it names ./data resolved, and creates nothing', async () => {
    const run = await takedown([randomUUID()], {}, dir);
    expect(run.code).toBe(3);
    expect(run.output).toContain(`(DATA_DIR=${path.join(dir, 'data')}) does not exist`);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('when DATABASE_URL names a SQLite file that is not there, then it names DATABASE_URL', async () => {
    const file = path.join(dir, 'elsewhere', 'notes.db');
    const run = await takedown([randomUUID()], { DATA_DIR: dir, DATABASE_URL: `sqlite:${file}` }, dir);
    expect(run.code).toBe(3);
    expect(run.output).toContain(`the notes database ${file} (DATABASE_URL=sqlite:${file}) does not exist`);
    expect(existsSync(path.join(dir, 'elsewhere'))).toBe(false);
    expect(existsSync(path.join(dir, 'keys'))).toBe(false);
  });

  it('when the database file exists but holds no notes table, then it refuses without printing the SQL or the lookup hash', async () => {
    writeFileSync(path.join(dir, 'notes.db'), '');
    const uuid = randomUUID();
    const keys = {
      MASTER_KEYS: ring('k1'), LOOKUP_KEY: randomBytes(32).toString('base64'), RECEIPT_SIGNING_KEYS: ring('r1'),
      MAIL_PRIVATE_KEYS: ring('m1'), WEBHOOK_PRIVATE_KEYS: ring('w1'),
    };
    const run = await takedown([uuid], { DATA_DIR: dir, ...keys }, dir);
    expect(run.code).toBe(3);
    expect(run.output).toContain(`takedown failed: the notes database ${path.join(dir, 'notes.db')} (DATA_DIR=${dir}) holds no notes table`);
    expectNoSecret(run.output, uuid);
    expect(existsSync(path.join(dir, 'keys'))).toBe(false);
  });

  it('when the notes database is there but its keys are not, then it refuses naming the key file and generates none', async () => {
    writeFileSync(path.join(dir, 'notes.db'), '');
    const run = await takedown([randomUUID()], { DATA_DIR: dir }, dir);
    expect(run.code).toBe(3);
    expect(run.output).toContain(`MASTER_KEYS: the key file ${path.join(dir, 'keys', 'master_keys.txt')} is missing`);
    expect(existsSync(path.join(dir, 'keys'))).toBe(false);
  });
});

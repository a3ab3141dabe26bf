import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, KeyRing } from '@vanish/common';
import { loadNotesConfig } from './config';

// Config loading writes generated keys into DATA_DIR: each test gets its own temporary directory.
let dataDir: string;
beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'notes-config-')); });
afterEach(() => { rmSync(dataDir, { recursive: true, force: true }); });

const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const productionEnv = () => ({
  NODE_ENV: 'production',
  DATA_DIR: dataDir,
  DATABASE_URL: 'mysql://notes:secret@db:3306/notes',
  AMQP_URL: 'amqp://guest:guest@rabbit:5672',
  PUBLIC_BASE_URL: 'https://notes.example.com',
  MASTER_KEYS: `k2:${KEY(2)},k1:${KEY(1)}`,
  LOOKUP_KEY: KEY(3),
  MAIL_KEYS: `m1:${KEY(4)}`,
});

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadNotesConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('loadNotesConfig', () => {
  it('when nothing is set, then the embedded defaults of DECISIONS 10 apply and keys are generated once with a warning', () => {
    const config = loadNotesConfig({ DATA_DIR: dataDir });
    expect(config).toMatchObject({
      port: 8081, adminPort: 9081, dataDir, databaseUrl: `sqlite:${join(dataDir, 'notes.db')}`,
      publicBaseUrl: 'http://localhost:8080', noteRetentionHours: 720, amqpUrl: undefined, amqpExchange: 'vanish',
      heartbeatIntervalMs: 10_000, logLevel: 'info', production: false, scryptLimit: { maxConcurrent: 2, maxQueued: 32 },
    });
    expect(config.warnings).toHaveLength(3);
    expect(config.warnings.join('\n')).toMatch(/MASTER_KEYS is not set: generated a key/);
    expect(config.lookupKey).toHaveLength(32);
    const keyFile = join(dataDir, 'keys', 'master_keys.txt');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    const again = loadNotesConfig({ DATA_DIR: dataDir });
    expect(again.warnings).toEqual([]);
    expect(again.masterKeys.serialize()).toBe(config.masterKeys.serialize());
    expect(again.lookupKey.equals(config.lookupKey)).toBe(true);
    expect(again.mailKeys.serialize()).toBe(config.mailKeys.serialize());
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(config.masterKeys.serialize());
  });

  it('when a logger is given, then the key warnings go to it at once instead of into warnings', () => {
    const heard: string[] = [];
    const logger = { debug() {}, info() {}, warn(msg: string) { heard.push(msg); }, error() {}, child() { return logger; } };
    const config = loadNotesConfig({ DATA_DIR: dataDir }, logger);
    expect(heard).toHaveLength(3);
    expect(config.warnings).toEqual([]);
  });

  it('when every production variable is set, then production starts and no key is generated', () => {
    const config = loadNotesConfig(productionEnv());
    expect(config.production).toBe(true);
    expect(config.masterKeys.current.id).toBe('k2');
    expect(config.masterKeys.find('k1')).toBeDefined();
    expect(config.lookupKey.equals(Buffer.alloc(32, 3))).toBe(true);
    expect(config.warnings).toEqual([]);
  });

  it('when NODE_ENV=production lacks every embedded default, then each missing variable is named at once', () => {
    const problems = problemsOf({ NODE_ENV: 'production', DATA_DIR: dataDir });
    for (const name of ['DATABASE_URL', 'AMQP_URL', 'PUBLIC_BASE_URL', 'MASTER_KEYS', 'LOOKUP_KEY', 'MAIL_KEYS']) {
      expect(problems.some((problem) => problem.startsWith(`${name}:`))).toBe(true);
    }
  });

  it('when NODE_ENV=production names a SQLite database, then it is refused', () => {
    expect(problemsOf({ ...productionEnv(), DATABASE_URL: 'sqlite:/data/notes.db' })).toEqual([expect.stringMatching(/^DATABASE_URL: required with NODE_ENV=production/)]);
  });

  it('when secrets come from *_FILE, then the files are read', () => {
    const file = join(dataDir, 'master');
    writeFileSync(file, `f1:${KEY(9)}\n`);
    const { MASTER_KEYS: _omit, ...env } = productionEnv();
    const config = loadNotesConfig({ ...env, MASTER_KEYS_FILE: file });
    expect(config.masterKeys.current).toEqual({ id: 'f1', material: Buffer.alloc(32, 9) });
  });

  it.each([
    ['PORT', 'eighty', /^PORT:/],
    ['PORT', '70000', /^PORT:/],
    ['ADMIN_PORT', '-1', /^ADMIN_PORT:/],
    ['DATABASE_URL', 'postgres://x/y', /^DATABASE_URL: expected mysql/],
    ['DATABASE_URL', 'mysql://root@127.0.0.1:3306', /^DATABASE_URL: a mysql:\/\/ URL must name its database/],
    ['DATABASE_URL', 'sqlite:', /^DATABASE_URL: sqlite: needs a file path/],
    ['PUBLIC_BASE_URL', 'ftp://x', /^PUBLIC_BASE_URL:/],
    ['PUBLIC_BASE_URL', 'not a url', /^PUBLIC_BASE_URL: not a valid URL/],
    ['AMQP_URL', 'http://rabbit', /^AMQP_URL:/],
    ['AMQP_EXCHANGE', 'a b', /^AMQP_EXCHANGE:/],
    ['MASTER_KEYS', 'k1:c2hvcnQ=', /^MASTER_KEYS: key "k1" must be 32 bytes/],
    ['LOOKUP_KEY', 'c2hvcnQ=', /^LOOKUP_KEY: must be 32 bytes/],
    ['MAIL_KEYS', 'nocolon', /^MAIL_KEYS:/],
    ['NOTE_RETENTION_HOURS', '0', /^NOTE_RETENTION_HOURS:/],
    ['SWEEP_INTERVAL_MS', '1.5', /^SWEEP_INTERVAL_MS:/],
    ['SCRYPT_MAX_CONCURRENT', '0', /^SCRYPT_MAX_CONCURRENT:/],
    ['SCRYPT_MAX_QUEUED', '-1', /^SCRYPT_MAX_QUEUED:/],
    ['HEARTBEAT_INTERVAL_MS', '10', /^HEARTBEAT_INTERVAL_MS:/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL:/],
    ['SHUTDOWN_GRACE_MS', 'soon', /^SHUTDOWN_GRACE_MS:/],
  ])('when %s is %j, then the configuration is refused naming it', (name, value, problem) => {
    expect(problemsOf({ DATA_DIR: dataDir, [name]: value })).toEqual(expect.arrayContaining([expect.stringMatching(problem)]));
  });

  it('when PORT equals ADMIN_PORT, then it is refused; 0 for both (tests) is fine', () => {
    expect(problemsOf({ DATA_DIR: dataDir, PORT: '9000', ADMIN_PORT: '9000' })).toEqual(['ADMIN_PORT: must differ from PORT']);
    expect(loadNotesConfig({ DATA_DIR: dataDir, PORT: '0', ADMIN_PORT: '0' })).toMatchObject({ port: 0, adminPort: 0 });
  });

  it('when SCRYPT_MAX_CONCURRENT and SCRYPT_MAX_QUEUED are set, then the passcode KDF cap uses them', () => {
    expect(loadNotesConfig({ DATA_DIR: dataDir, SCRYPT_MAX_CONCURRENT: '1', SCRYPT_MAX_QUEUED: '0' }).scryptLimit).toEqual({ maxConcurrent: 1, maxQueued: 0 });
  });

  it('when PUBLIC_BASE_URL ends with a slash, then links do not get a double slash', () => {
    expect(loadNotesConfig({ DATA_DIR: dataDir, PUBLIC_BASE_URL: 'https://n.example/' }).publicBaseUrl).toBe('https://n.example');
  });

  it('when keys are given, then they are used as given and nothing is written', () => {
    const config = loadNotesConfig({ DATA_DIR: dataDir, MASTER_KEYS: `a:${KEY(5)}`, LOOKUP_KEY: KEY(6), MAIL_KEYS: `b:${KEY(7)}` });
    expect(config.masterKeys.serialize()).toBe(new KeyRing([{ id: 'a', material: Buffer.alloc(32, 5) }]).serialize());
    expect(config.warnings).toEqual([]);
    expect(() => statSync(join(dataDir, 'keys'))).toThrow();
  });
});

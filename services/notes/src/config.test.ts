import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, KeyRing, publicRingOf } from '@vanish/common';
import { loadNotesConfig } from './config';

// Config loading writes generated keys into DATA_DIR: each test gets its own temporary directory.
let dataDir: string;
beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'notes-config-')); });
afterEach(() => { rmSync(dataDir, { recursive: true, force: true }); });

const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const MAILER_PUBLIC = publicRingOf(KeyRing.parse(`m1:${KEY(4)}`)).serialize();
const productionEnv = () => ({
  NODE_ENV: 'production',
  DATA_DIR: dataDir,
  DATABASE_URL: 'mysql://notes:secret@db:3306/notes?ssl-mode=VERIFY_IDENTITY',
  AMQP_URL: 'amqps://guest:guest@rabbit:5671',
  PUBLIC_BASE_URL: 'https://notes.example.com',
  MASTER_KEYS: `k2:${KEY(2)},k1:${KEY(1)}`,
  LOOKUP_KEY: KEY(3),
  MAIL_PUBLIC_KEYS: MAILER_PUBLIC,
  RECEIPT_SIGNING_KEYS: `r1:${KEY(4)}`,
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
  it('when production reaches MySQL or RabbitMQ without verified TLS, then it refuses, naming each; the named opt-outs accept it', () => {
    const plaintext = { ...productionEnv(), DATABASE_URL: 'mysql://notes:secret@db:3306/notes', AMQP_URL: 'amqp://guest:guest@rabbit:5672' };
    expect(problemsOf(plaintext)).toEqual([
      expect.stringMatching(/^DATABASE_URL: connects to MySQL without TLS.*DATABASE_ALLOW_PLAINTEXT=true/),
      expect.stringMatching(/^AMQP_URL: amqp:\/\/ is plaintext.*AMQP_ALLOW_PLAINTEXT=true/),
    ]);
    expect(problemsOf({ ...productionEnv(), DATABASE_URL: 'mysql://n:s@db/notes?ssl-mode=REQUIRED' }))
      .toEqual([expect.stringMatching(/^DATABASE_URL: ssl-mode=REQUIRED encrypts but does not verify/)]);
    expect(loadNotesConfig({ ...plaintext, DATABASE_ALLOW_PLAINTEXT: 'true', AMQP_ALLOW_PLAINTEXT: 'true' }).production).toBe(true);
  });

  it('when DATABASE_SSL_CA_FILE and AMQP_TLS_CA_FILE name PEM files, then their contents are the CAs; an unknown URL parameter is refused', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    const file = join(dataDir, 'ca.pem');
    writeFileSync(file, pem);
    const config = loadNotesConfig({ ...productionEnv(), DATABASE_SSL_CA_FILE: file, AMQP_TLS_CA_FILE: file });
    expect(config.databaseSslCa).toBe(pem);
    expect(config.amqpTls).toEqual({ ca: pem });
    expect(problemsOf({ ...productionEnv(), DATABASE_URL: 'mysql://n@db/notes?sslmode=require' })).toEqual([expect.stringMatching(/^DATABASE_URL: unknown parameter "sslmode"/)]);
  });

  it('when nothing is set, then the embedded defaults of DECISIONS 10 apply and keys are generated once with a warning', () => {
    const config = loadNotesConfig({ DATA_DIR: dataDir });
    expect(config).toMatchObject({
      port: 8081, adminPort: 9081, dataDir, databaseUrl: `sqlite:${join(dataDir, 'notes.db')}`,
      publicBaseUrl: 'http://localhost:8080', noteRetentionHours: 720, amqpUrl: undefined, amqpExchange: 'vanish',
      heartbeatIntervalMs: 10_000, logLevel: 'info', production: false, scryptLimit: { maxConcurrent: 2, maxQueued: 32 },
    });
    // MASTER_KEYS, LOOKUP_KEY, the mailer's and the webhooks service's private rings (their public halves are used), RECEIPT_SIGNING_KEYS.
    expect(config.warnings).toHaveLength(5);
    expect(config.warnings.join('\n')).toMatch(/MASTER_KEYS is not set: generated a key/);
    expect(config.lookupKey).toHaveLength(32);
    const keyFile = join(dataDir, 'keys', 'master_keys.txt');
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    const again = loadNotesConfig({ DATA_DIR: dataDir });
    expect(again.warnings).toEqual([]);
    expect(again.masterKeys.serialize()).toBe(config.masterKeys.serialize());
    expect(again.lookupKey.equals(config.lookupKey)).toBe(true);
    expect(again.mailSealing).toEqual(config.mailSealing);
    expect(config.mailSealing.kind).toBe('to-mailer');
    expect(config.warnings.join('\n')).toMatch(/MAIL_PRIVATE_KEYS is not set: generated a key/);
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(config.masterKeys.serialize());
  });

  it('when a logger is given, then the key warnings go to it at once instead of into warnings', () => {
    const heard: string[] = [];
    const logger = { debug() {}, info() {}, warn(msg: string) { heard.push(msg); }, error() {}, child() { return logger; } };
    const config = loadNotesConfig({ DATA_DIR: dataDir }, logger);
    expect(heard).toHaveLength(5);
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
    for (const name of ['DATABASE_URL', 'AMQP_URL', 'PUBLIC_BASE_URL', 'MASTER_KEYS', 'LOOKUP_KEY', 'MAIL_PUBLIC_KEYS', 'RECEIPT_SIGNING_KEYS']) {
      expect(problems.some((problem) => problem.startsWith(`${name}:`))).toBe(true);
    }
  });

  it('when NODE_ENV=production names an http:// PUBLIC_BASE_URL, then it is refused by name; outside production it is accepted', () => {
    expect(problemsOf({ ...productionEnv(), PUBLIC_BASE_URL: 'http://notes.example.com' }))
      .toEqual([expect.stringMatching(/^PUBLIC_BASE_URL: refused with NODE_ENV=production/)]);
    const { NODE_ENV: _production, ...development } = productionEnv();
    expect(loadNotesConfig({ ...development, PUBLIC_BASE_URL: 'http://notes.example.com' }).publicBaseUrl).toBe('http://notes.example.com');
  });

  it('when NODE_ENV=production has an http:// PUBLIC_BASE_URL with ALLOW_INSECURE_PUBLIC_BASE_URL=true (a private network), then it starts', () => {
    const config = loadNotesConfig({ ...productionEnv(), PUBLIC_BASE_URL: 'http://notes.internal', ALLOW_INSECURE_PUBLIC_BASE_URL: 'true' });
    expect(config.publicBaseUrl).toBe('http://notes.internal');
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
    ['MAIL_PUBLIC_KEYS', 'nocolon', /^MAIL_PUBLIC_KEYS:/],
    ['RECEIPT_SIGNING_KEYS', 'r1:c2hvcnQ=', /^RECEIPT_SIGNING_KEYS: key "r1" must be 32 bytes/],
    ['NOTE_RETENTION_HOURS', '0', /^NOTE_RETENTION_HOURS:/],
    ['EXPIRY_PRESETS', '5m,1y', /^EXPIRY_PRESETS: "1y"/],
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
    const config = loadNotesConfig({ DATA_DIR: dataDir, MASTER_KEYS: `a:${KEY(5)}`, LOOKUP_KEY: KEY(6), MAIL_PUBLIC_KEYS: MAILER_PUBLIC, RECEIPT_SIGNING_KEYS: `r:${KEY(7)}`, WEBHOOK_PUBLIC_KEYS: MAILER_PUBLIC });
    expect(config.masterKeys.serialize()).toBe(new KeyRing([{ id: 'a', material: Buffer.alloc(32, 5) }]).serialize());
    expect(config.warnings).toEqual([]);
    expect(() => statSync(join(dataDir, 'keys'))).toThrow();
  });

  it('when only the public ring is given, then notes holds no key that opens a mail command', () => {
    const config = loadNotesConfig(productionEnv());
    expect(config.mailSealing).toEqual({ kind: 'to-mailer', publicKeys: KeyRing.parse(MAILER_PUBLIC) });
  });

  it('when only MAIL_KEYS is set (a deployment not migrated yet), then the legacy ring seals, with a warning', () => {
    const { MAIL_PUBLIC_KEYS: _omit, ...env } = productionEnv();
    const config = loadNotesConfig({ ...env, MAIL_KEYS: `m0:${KEY(8)}` });
    expect(config.mailSealing.kind).toBe('legacy');
    expect(config.warnings.join('\n')).toMatch(/MAIL_KEYS: mail commands are sealed with the symmetric legacy ring/);
  });

  it('when MAIL_PUBLIC_KEYS is set beside MAIL_KEYS, then notes stops sealing with MAIL_KEYS and says to remove it', () => {
    const config = loadNotesConfig({ ...productionEnv(), MAIL_KEYS: `m0:${KEY(8)}` });
    expect(config.mailSealing.kind).toBe('to-mailer');
    expect(config.warnings.join('\n')).toMatch(/MAIL_KEYS is set but no longer used by notes/);
  });

  it('when the all-in-one process is given MAIL_PRIVATE_KEYS beside an old MAIL_KEYS (outside production), then notes seals to its public half', () => {
    const privateRing = KeyRing.generate('x1');
    const config = loadNotesConfig({ DATA_DIR: dataDir, MAIL_KEYS: `m0:${KEY(8)}`, MAIL_PRIVATE_KEYS: privateRing.serialize() });
    expect(config.mailSealing).toEqual({ kind: 'to-mailer', publicKeys: publicRingOf(privateRing) });
  });
});

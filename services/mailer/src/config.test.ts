import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, KeyRing } from '@vanish/common';
import { deriveHashKey, loadMailerConfig } from './config';

const dataDir = () => mkdtempSync(join(tmpdir(), 'mailer-config-'));
const keys = KeyRing.generate('m1').serialize();
const privateKeys = KeyRing.generate('x1').serialize();

describe('loadMailerConfig', () => {
  it('when nothing is set, then the embedded defaults are used (file mail, SQLite in DATA_DIR, generated keys)', () => {
    const dir = dataDir();
    const config = loadMailerConfig({ DATA_DIR: dir });
    expect(config.port).toBe(8083);
    expect(config.adminPort).toBe(9083);
    expect(config.databaseUrl).toBe(`sqlite:${join(dir, 'mailer.db')}`);
    expect(config.smtp).toBeUndefined();
    expect(config.outboxDir).toBe(join(dir, 'outbox'));
    expect(config.mailFrom).toBe('notes@localhost');
    expect(config.quotaPerHour).toBe(10);
    expect(config.quotaPerDay).toBe(50);
    expect(config.hashKeySource).toBe('derived-from-MAIL_PRIVATE_KEYS');
    expect(config.hashKey).toEqual(deriveHashKey(config.mailPrivateKeys));
    expect(config.legacyMailKeys).toBeUndefined();
    expect(config.deadLetterRetentionMs).toBe(7 * 24 * 3_600_000);
    expect(loadMailerConfig({ DATA_DIR: dir }).mailPrivateKeys.serialize()).toBe(config.mailPrivateKeys.serialize());
  });

  it('when SMTP_URL and the rest are set, then they are used', () => {
    const hashKey = Buffer.alloc(32, 3).toString('base64');
    const config = loadMailerConfig({
      DATA_DIR: dataDir(), SMTP_URL: 'smtps://u:p@mail.example.com', SMTP_TIMEOUT_MS: '5000', MAIL_KEYS: keys,
      MAILER_HASH_KEY: hashKey, MAIL_QUOTA_PER_HOUR: '3', MAIL_QUOTA_PER_DAY: '4', MAIL_RETRY_HORIZON_MS: '60000',
      PUBLIC_BASE_URL: 'https://vanish.example/', DATABASE_URL: 'mysql://root@127.0.0.1:3306/m', AMQP_URL: 'amqp://localhost',
    });
    expect(config.smtp).toEqual({ url: 'smtps://u:p@mail.example.com', poolSize: 10, timeoutMs: 5000, replyTimeoutMs: 120_000 });
    // The wait for a reply once the server greeted is never shorter than the connect/greeting timeout.
    const env = { DATA_DIR: dataDir(), SMTP_URL: 'smtps://u:p@mail.example.com', MAIL_KEYS: keys };
    expect(loadMailerConfig({ ...env, SMTP_TIMEOUT_MS: '5000', SMTP_REPLY_TIMEOUT_MS: '1000' }).smtp?.replyTimeoutMs).toBe(5000);
    expect(loadMailerConfig({ ...env, SMTP_REPLY_TIMEOUT_MS: '90000' }).smtp?.replyTimeoutMs).toBe(90_000);
    expect(config.hashKey.toString('base64')).toBe(hashKey);
    expect(config.publicBaseUrl).toBe('https://vanish.example');
    expect(config.retry.horizonMs).toBe(60000);
    expect([config.quotaPerHour, config.quotaPerDay]).toEqual([3, 4]);
  });

  it('when production sends through smtp:// without required STARTTLS, then it refuses unless SMTP_ALLOW_PLAINTEXT=true', () => {
    const env = {
      NODE_ENV: 'production', DATA_DIR: dataDir(), MAIL_PRIVATE_KEYS: privateKeys, PUBLIC_BASE_URL: 'https://vanish.example',
      DATABASE_URL: 'mysql://m:p@db/mailer?ssl-mode=VERIFY_IDENTITY', AMQP_URL: 'amqps://u:p@mq', SMTP_URL: 'smtp://mail.example.com:587',
    };
    expect(() => loadMailerConfig(env)).toThrow(/SMTP_URL: smtp:\/\/ uses STARTTLS only when offered[\s\S]*SMTP_ALLOW_PLAINTEXT=true/);
    expect(() => loadMailerConfig({ ...env, SMTP_URL: 'smtp://mail.example.com?starttls=never' })).toThrow(/SMTP_URL: .*plaintext/);
    expect(loadMailerConfig({ ...env, SMTP_ALLOW_PLAINTEXT: 'true' }).smtp?.url).toBe('smtp://mail.example.com:587');
    expect(loadMailerConfig({ ...env, SMTP_URL: 'smtp://mail.example.com?starttls=required' }).production).toBe(true);
    expect(loadMailerConfig({ ...env, SMTP_URL: 'smtps://mail.example.com' }).production).toBe(true);
    expect(() => loadMailerConfig({ ...env, AMQP_URL: 'amqp://u:p@mq' })).toThrow(/AMQP_URL: amqp:\/\/ is plaintext/);
  });

  it('when NODE_ENV=production relies on embedded defaults, then it refuses to start and names every variable', () => {
    let error: ConfigError | undefined;
    try {
      loadMailerConfig({ NODE_ENV: 'production', DATA_DIR: dataDir() });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const text = error!.problems.join('\n');
    for (const name of ['DATABASE_URL', 'AMQP_URL', 'SMTP_URL', 'MAIL_PRIVATE_KEYS', 'PUBLIC_BASE_URL']) expect(text).toContain(name);
    expect(text).not.toContain('MAIL_KEYS:');
  });

  describe('PUBLIC_BASE_URL in e-mailed links', () => {
    const production = () => ({
      NODE_ENV: 'production', DATA_DIR: dataDir(), DATABASE_URL: 'mysql://root@127.0.0.1:3306/m?ssl-mode=VERIFY_IDENTITY', AMQP_URL: 'amqps://localhost',
      SMTP_URL: 'smtps://u:p@mail.example.com', MAIL_PRIVATE_KEYS: privateKeys, PUBLIC_BASE_URL: 'https://vanish.example',
    });

    it('when NODE_ENV=production names an http:// origin, then it refuses, naming PUBLIC_BASE_URL', () => {
      expect(() => loadMailerConfig(production())).not.toThrow();
      expect(() => loadMailerConfig({ ...production(), PUBLIC_BASE_URL: 'http://vanish.example' })).toThrow(/^Invalid configuration:\n  - PUBLIC_BASE_URL: refused with NODE_ENV=production[^\n]*$/);
    });

    it('when the same http:// origin is given outside production, or with ALLOW_INSECURE_PUBLIC_BASE_URL=true, then it is accepted', () => {
      const { NODE_ENV: _production, ...development } = production();
      expect(loadMailerConfig({ ...development, PUBLIC_BASE_URL: 'http://vanish.example' }).publicBaseUrl).toBe('http://vanish.example');
      expect(loadMailerConfig({ ...production(), PUBLIC_BASE_URL: 'http://vanish.internal', ALLOW_INSECURE_PUBLIC_BASE_URL: 'true' }).publicBaseUrl)
        .toBe('http://vanish.internal');
    });
  });

  it('when HOST is set, then both ports listen there; unset, on every address', () => {
    expect(loadMailerConfig({ DATA_DIR: dataDir(), MAIL_KEYS: keys }).host).toBe('0.0.0.0');
    expect(loadMailerConfig({ DATA_DIR: dataDir(), MAIL_KEYS: keys, HOST: '127.0.0.1' }).host).toBe('127.0.0.1');
  });

  it('when values are malformed, then every problem is reported at once', () => {
    expect(() => loadMailerConfig({ DATA_DIR: dataDir(), SMTP_URL: 'http://x', MAIL_FROM: 'A <a@b.c>', MAILER_HASH_KEY: 'c2hvcnQ=', MAIL_QUOTA_PER_HOUR: 'x' }))
      .toThrow(/SMTP_URL[\s\S]*MAIL_FROM[\s\S]*MAILER_HASH_KEY[\s\S]*MAIL_QUOTA_PER_HOUR/);
  });

  it('when MAIL_KEYS is set beside MAIL_PRIVATE_KEYS (the migration), then it is the legacy ring and the hash key stays derived from it', () => {
    const config = loadMailerConfig({ DATA_DIR: dataDir(), MAIL_KEYS: keys, MAIL_PRIVATE_KEYS: KeyRing.generate('x1').serialize() });
    expect(config.legacyMailKeys?.serialize()).toBe(keys);
    expect(config.hashKeySource).toBe('derived-from-MAIL_KEYS');
    expect(config.hashKey).toEqual(deriveHashKey(KeyRing.parse(keys)));
  });

  it('when an older version generated MAIL_KEYS into DATA_DIR, then it still opens the commands queued then (never generated again)', () => {
    const dir = dataDir();
    mkdirSync(join(dir, 'keys'));
    writeFileSync(join(dir, 'keys', 'mail_keys.txt'), `${keys}\n`);
    expect(loadMailerConfig({ DATA_DIR: dir }).legacyMailKeys?.serialize()).toBe(keys);
    expect(loadMailerConfig({ DATA_DIR: dataDir() }).legacyMailKeys).toBeUndefined();
  });

  it('when the dead-letter retention is set, then it is used; below a second it is refused', () => {
    expect(loadMailerConfig({ DATA_DIR: dataDir(), MAIL_DEAD_LETTER_RETENTION_MS: '60000' }).deadLetterRetentionMs).toBe(60000);
    expect(() => loadMailerConfig({ DATA_DIR: dataDir(), MAIL_DEAD_LETTER_RETENTION_MS: '5' })).toThrow(/MAIL_DEAD_LETTER_RETENTION_MS/);
  });
});

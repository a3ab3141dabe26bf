import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EnvReader, ConfigError } from '@vanish/common';
import { isDatabaseUnavailable } from './database-errors';
import { readDatabaseSettings } from './database-settings';
import { databaseDialect, databaseTransportRisk, effectiveSslMode, mysqlSsl, parseDatabaseUrl, type MysqlLocation } from './database-url';

const mysql = (url: string) => parseDatabaseUrl(url) as MysqlLocation;

describe('DATABASE_URL parsing', () => {
  it('when DATABASE_URL is sqlite: or mysql://, then the dialect follows; anything else is refused', () => {
    expect(databaseDialect('sqlite:./data/notes.db')).toBe('sqlite');
    expect(databaseDialect('mysql://u:p@db:3306/notes')).toBe('mysql');
    expect(() => databaseDialect('postgres://db/notes')).toThrow(/sqlite:PATH or mysql:/);
  });

  it('when a mysql:// URL carries credentials, port and database, then each is decoded', () => {
    expect(parseDatabaseUrl('mysql://us%40r:p%2Fw@db.example:3307/no%74es')).toEqual({
      dialect: 'mysql', host: 'db.example', port: 3307, user: 'us@r', password: 'p/w', database: 'notes', sslMode: undefined, sslCaFile: undefined,
    });
    expect(parseDatabaseUrl('sqlite:rel/x.db')).toEqual({ dialect: 'sqlite', filename: resolve('rel/x.db') });
    expect(parseDatabaseUrl('sqlite:///abs/x.db')).toEqual({ dialect: 'sqlite', filename: '/abs/x.db' });
  });

  it('when the URL is incomplete or asks for what we do not know, then the message says what is wrong', () => {
    expect(() => parseDatabaseUrl('mysql://root@127.0.0.1:3306', 'notes')).toThrow('a mysql:// URL must name its database, e.g. mysql://user:pass@host:3306/notes');
    expect(() => parseDatabaseUrl('sqlite:', 'stats')).toThrow('sqlite: needs a file path, e.g. sqlite:./data/stats.db');
    expect(() => parseDatabaseUrl('mysql://db/n?ssl=true')).toThrow('unknown parameter "ssl" (known: ssl-mode, ssl-ca)');
    expect(() => parseDatabaseUrl('mysql://db/n?ssl-mode=PREFERRED')).toThrow(/ssl-mode must be one of DISABLED, REQUIRED, VERIFY_CA, VERIFY_IDENTITY/);
    expect(() => parseDatabaseUrl('mysql://db/n?ssl-mode=DISABLED&ssl-ca=/ca.pem')).toThrow(/ssl-mode is DISABLED/);
  });

  it('when TLS is asked for, then mysql2 verifies the chain (VERIFY_CA) and the host name too (VERIFY_IDENTITY); REQUIRED only encrypts', () => {
    expect(mysqlSsl(mysql('mysql://db/n'))).toBeUndefined();
    expect(mysqlSsl(mysql('mysql://db/n?ssl-mode=required'))).toEqual({ rejectUnauthorized: false, verifyIdentity: false });
    expect(mysqlSsl(mysql('mysql://db/n?ssl-mode=VERIFY_CA'), 'PEM')).toEqual({ ca: 'PEM', rejectUnauthorized: true, verifyIdentity: false });
    expect(mysqlSsl(mysql('mysql://db/n?ssl-mode=VERIFY_IDENTITY'))).toEqual({ rejectUnauthorized: true, verifyIdentity: true });
    // A CA given anywhere means TLS with full verification unless the URL says otherwise.
    expect(effectiveSslMode(mysql('mysql://db/n'), 'PEM')).toBe('VERIFY_IDENTITY');
    const dir = mkdtempSync(join(tmpdir(), 'db-url-'));
    try {
      writeFileSync(join(dir, 'ca.pem'), 'FROM FILE');
      const location = mysql(`mysql://db/n?ssl-ca=${encodeURIComponent(join(dir, 'ca.pem'))}`);
      expect(effectiveSslMode(location)).toBe('VERIFY_IDENTITY');
      expect(mysqlSsl(location, 'FROM VARIABLE')?.ca?.toString()).toBe('FROM FILE');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when production reads a DATABASE_URL, then plaintext and unverified TLS are refused by name unless DATABASE_ALLOW_PLAINTEXT=true', () => {
    const problems = (env: Record<string, string>) => {
      const reader = new EnvReader({ NODE_ENV: 'production', ...env });
      readDatabaseSettings(reader, { fallback: 'sqlite:/var/lib/vanish/x.db', example: 'x' });
      try {
        reader.done();
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ DATABASE_URL: 'mysql://u@db/x' })).toEqual([expect.stringMatching(/^DATABASE_URL: connects to MySQL without TLS/)]);
    expect(problems({ DATABASE_URL: 'mysql://u@db/x?ssl-mode=REQUIRED' })).toEqual([expect.stringMatching(/^DATABASE_URL: ssl-mode=REQUIRED/)]);
    expect(problems({ DATABASE_URL: 'mysql://u@db/x?ssl-mode=VERIFY_CA' })).toEqual([]);
    expect(problems({ DATABASE_URL: 'mysql://u@db/x?ssl-ca=/nowhere/ca.pem' })).toEqual([expect.stringMatching(/ssl-ca file \/nowhere\/ca.pem does not exist/)]);
    expect(problems({ DATABASE_URL: 'mysql://u@db/x', DATABASE_ALLOW_PLAINTEXT: 'true' })).toEqual([]);
    expect(problems({})).toEqual([expect.stringMatching(/^DATABASE_URL: required with NODE_ENV=production/)]);
    expect(databaseTransportRisk(mysql('mysql://db/n'), 'PEM')).toBeUndefined();
  });
});

describe('isDatabaseUnavailable', () => {
  it('when a driver error means the database is down or busy, then it is classed unavailable; a SQL bug is not', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('timeout'), { name: 'KnexTimeoutError' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('gone'), { fatal: true }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'PROTOCOL_CONNECTION_LOST' }) }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('syntax'), { code: 'ER_PARSE_ERROR' }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('dup'), { code: 'ER_DUP_ENTRY' }))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});

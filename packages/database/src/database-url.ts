import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export type DatabaseDialect = 'sqlite' | 'mysql';

/**
 * MySQL's own names for how a client uses TLS (the `--ssl-mode` of the mysql client):
 * DISABLED plaintext; REQUIRED encrypted, the server not verified; VERIFY_CA the server's
 * certificate must chain to the CA; VERIFY_IDENTITY that, and it must name the host we dialled.
 * PREFERRED (TLS when offered, else plaintext in silence) is not offered: a path attacker strips it.
 */
export const MYSQL_SSL_MODES = ['DISABLED', 'REQUIRED', 'VERIFY_CA', 'VERIFY_IDENTITY'] as const;
export type MysqlSslMode = (typeof MYSQL_SSL_MODES)[number];

export interface SqliteLocation {
  dialect: 'sqlite';
  /** An absolute path, or `:memory:`. */
  filename: string;
}

export interface MysqlLocation {
  dialect: 'mysql';
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** `ssl-mode` from the URL; unset: VERIFY_IDENTITY when a CA is given, else DISABLED. */
  sslMode: MysqlSslMode | undefined;
  /** `ssl-ca` from the URL: path of a PEM file with the CA certificates to trust. */
  sslCaFile: string | undefined;
}

export type DatabaseLocation = SqliteLocation | MysqlLocation;

/** What the connection settings ask of TLS, resolved (mysql2's `ssl` option). */
export interface MysqlSsl {
  ca?: Buffer | string;
  rejectUnauthorized: boolean;
  verifyIdentity: boolean;
}

const URL_PARAMETERS = ['ssl-mode', 'ssl-ca'];

export function databaseDialect(databaseUrl: string): DatabaseDialect {
  if (databaseUrl.startsWith('sqlite:')) return 'sqlite';
  if (/^mysql2?:\/\//i.test(databaseUrl)) return 'mysql';
  throw new Error('DATABASE_URL must be sqlite:PATH or mysql://user:pass@host:port/db');
}

/**
 * `sqlite:PATH` or `mysql://user:pass@host:port/db?ssl-mode=VERIFY_IDENTITY&ssl-ca=/path/ca.pem`.
 * Throws with a message naming what is wrong (without the variable's name, which the caller adds).
 * `example` is the database name used in messages (the service's own).
 */
export function parseDatabaseUrl(databaseUrl: string, example = 'app'): DatabaseLocation {
  if (databaseUrl.startsWith('sqlite:')) {
    const raw = databaseUrl.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '').trim();
    if (raw === '') throw new Error(`sqlite: needs a file path, e.g. sqlite:./data/${example}.db`);
    return { dialect: 'sqlite', filename: raw === ':memory:' ? raw : resolve(raw) };
  }
  if (!/^mysql2?:\/\//i.test(databaseUrl)) throw new Error('expected mysql://user:pass@host:port/db or sqlite:PATH');
  let url: URL;
  try {
    url = new URL(databaseUrl.replace(/^mysql2:/i, 'mysql:'));
  } catch {
    throw new Error('not a valid mysql:// URL');
  }
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database === '') throw new Error(`a mysql:// URL must name its database, e.g. mysql://user:pass@host:3306/${example}`);
  for (const name of url.searchParams.keys()) {
    if (!URL_PARAMETERS.includes(name)) throw new Error(`unknown parameter "${name}" (known: ${URL_PARAMETERS.join(', ')})`);
  }
  const mode = url.searchParams.get('ssl-mode')?.toUpperCase();
  if (mode !== undefined && !(MYSQL_SSL_MODES as readonly string[]).includes(mode)) {
    throw new Error(`ssl-mode must be one of ${MYSQL_SSL_MODES.join(', ')}, got "${url.searchParams.get('ssl-mode')}"`);
  }
  const sslCaFile = url.searchParams.get('ssl-ca') ?? undefined;
  if (sslCaFile === '') throw new Error('ssl-ca must be the path of a PEM file');
  if (mode === 'DISABLED' && sslCaFile !== undefined) throw new Error('ssl-ca is given but ssl-mode is DISABLED');
  return {
    dialect: 'mysql',
    host: url.hostname,
    port: url.port ? Number(url.port) : 3306,
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    database,
    sslMode: mode as MysqlSslMode | undefined,
    sslCaFile,
  };
}

/** The mode in force: the URL's, else VERIFY_IDENTITY when a CA was given anywhere, else DISABLED. */
export function effectiveSslMode(location: MysqlLocation, caFromVariable?: string | Buffer): MysqlSslMode {
  if (location.sslMode) return location.sslMode;
  return location.sslCaFile !== undefined || caFromVariable !== undefined ? 'VERIFY_IDENTITY' : 'DISABLED';
}

/**
 * mysql2's `ssl` option for a location: undefined for DISABLED. The CA comes from the URL's
 * `ssl-ca` file when given, else from `caFromVariable` (DATABASE_SSL_CA), else Node's public roots.
 */
export function mysqlSsl(location: MysqlLocation, caFromVariable?: string | Buffer): MysqlSsl | undefined {
  const mode = effectiveSslMode(location, caFromVariable);
  if (mode === 'DISABLED') return undefined;
  if (mode === 'REQUIRED') return { rejectUnauthorized: false, verifyIdentity: false };
  const ca = location.sslCaFile !== undefined ? readFileSync(location.sslCaFile) : caFromVariable;
  return { ...(ca !== undefined ? { ca } : {}), rejectUnauthorized: true, verifyIdentity: mode === 'VERIFY_IDENTITY' };
}

/** Why a path attacker could read or change this connection's traffic, or undefined when it cannot. */
export function databaseTransportRisk(location: MysqlLocation, caFromVariable?: string | Buffer): string | undefined {
  switch (effectiveSslMode(location, caFromVariable)) {
    case 'DISABLED':
      return 'connects to MySQL without TLS (add ?ssl-mode=VERIFY_IDENTITY, with ssl-ca or DATABASE_SSL_CA_FILE for a private CA)';
    case 'REQUIRED':
      return 'ssl-mode=REQUIRED encrypts but does not verify the server (use VERIFY_CA or VERIFY_IDENTITY)';
    default:
      return undefined;
  }
}

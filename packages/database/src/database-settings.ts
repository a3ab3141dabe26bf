import { existsSync } from 'node:fs';
import { readTlsCa, refuseInsecureTransportInProduction, type EnvReader } from '@vanish/common';
import { databaseTransportRisk, parseDatabaseUrl } from './database-url';

export interface DatabaseSettings {
  /** `sqlite:PATH` or `mysql://user:pass@host:port/db[?ssl-mode=...&ssl-ca=...]`. */
  url: string;
  /** DATABASE_SSL_CA / DATABASE_SSL_CA_FILE: CA bundle (PEM) for MySQL TLS when the URL has no ssl-ca. */
  sslCa: string | undefined;
}

/**
 * Reads and checks a service's DATABASE_URL (and DATABASE_SSL_CA) the same way for every service.
 * With NODE_ENV=production: SQLite is refused, and so is MySQL without verified TLS unless
 * DATABASE_ALLOW_PLAINTEXT=true. `example` names the service's database in messages.
 */
export function readDatabaseSettings(reader: EnvReader, options: { fallback: string; example: string; name?: string }): DatabaseSettings {
  const name = options.name ?? 'DATABASE_URL';
  const url = reader.str(name, options.fallback);
  const sslCa = readTlsCa(reader, 'DATABASE_SSL_CA');
  let location;
  try {
    location = parseDatabaseUrl(url, options.example);
  } catch (err) {
    reader.problem(`${name}: ${(err as Error).message}`);
    return { url, sslCa };
  }
  if (location.dialect === 'sqlite') {
    if (reader.isProduction) reader.problem(`${name}: required with NODE_ENV=production (a mysql:// URL; the embedded SQLite default is for a laptop)`);
    return { url, sslCa };
  }
  if (location.sslCaFile !== undefined && !existsSync(location.sslCaFile)) reader.problem(`${name}: ssl-ca file ${location.sslCaFile} does not exist`);
  refuseInsecureTransportInProduction(reader, { variable: name, risk: databaseTransportRisk(location, sslCa), optOut: 'DATABASE_ALLOW_PLAINTEXT' });
  return { url, sslCa };
}

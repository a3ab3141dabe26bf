import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import knexFactory, { type Knex } from 'knex';

/** The one place that knows the SQL dialects: `sqlite:PATH` (embedded default) or `mysql://...`. */
export function configureKnex(databaseUrl: string): Knex {
  if (databaseUrl.startsWith('sqlite:')) {
    const filename = databaseUrl.slice('sqlite:'.length);
    if (filename !== ':memory:') mkdirSync(dirname(filename), { recursive: true });
    return knexFactory({
      client: 'better-sqlite3',
      connection: { filename },
      useNullAsDefault: true,
      pool: {
        min: 1,
        max: 1,
        afterCreate: (conn: { pragma(sql: string): unknown }, done: (err: Error | null, conn: unknown) => void) => {
          conn.pragma('journal_mode = WAL');
          conn.pragma('busy_timeout = 5000');
          conn.pragma('foreign_keys = ON');
          done(null, conn);
        },
      },
    });
  }
  const url = new URL(databaseUrl.replace(/^mysql2:/, 'mysql:'));
  return knexFactory({
    client: 'mysql2',
    connection: {
      host: url.hostname,
      port: url.port ? Number(url.port) : 3306,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.replace(/^\//, ''),
      charset: 'utf8mb4',
      timezone: 'Z',
      decimalNumbers: true,
      connectTimeout: 5_000,
    },
    pool: { min: 0, max: 10 },
    acquireConnectionTimeout: 10_000,
  });
}

export function isSqlite(knex: Knex): boolean {
  const client = knex.client.config.client;
  return client === 'better-sqlite3' || client === 'sqlite3';
}

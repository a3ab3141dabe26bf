import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import type { TestDatabase } from '@vanish/testkit/mariadb';
import { freePort, waitFor } from '@vanish/testkit/net';
import { requireBinary, startDaemon, type Daemon } from './daemons';

const run = promisify(execFile);

/** A MariaDB server of the test's own (Debian's mariadbd, --no-defaults: never the machine's 3306). */
export interface OwnMariaDb {
  readonly port: number;
  createDatabase(prefix: string): Promise<TestDatabase>;
  /** One statement as root over a connection of its own. */
  query<T = unknown>(sql: string, params?: unknown[]): Promise<T>;
  /** SIGKILL, as a crashed primary. */
  kill(): Promise<void>;
  /** Starts it again on the same data directory and port (crash recovery), resolving once it answers. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** `serverArgs`: more mariadbd options (binary logs, replication) on top of the small defaults below. */
export async function startOwnMariaDb(serverArgs: readonly string[] = []): Promise<OwnMariaDb> {
  requireBinary('/usr/sbin/mariadbd', 'apt-get install -y mariadb-server');
  const dir = mkdtempSync(join(tmpdir(), 'vanish-mariadb-'));
  const datadir = join(dir, 'data');
  // Temporary tables in a directory of its own: in the machine's shared one, another server's bootstrap once
  // removed this one's (mariadb-install-db failed with "Unknown table 'mysql.tmp_user_sys'").
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp);
  await run('/usr/bin/mariadb-install-db', ['--no-defaults', `--datadir=${datadir}`, `--tmpdir=${tmp}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--user=root'], { timeout: 120_000 });
  const port = await freePort();
  let daemon: Daemon | undefined;
  const connect = () => mysql.createConnection({ host: '127.0.0.1', port, user: 'root', password: '' });
  const server: OwnMariaDb = {
    port,
    async query<T>(sql: string, params: unknown[] = []) {
      const connection = await connect();
      try {
        const [rows] = await connection.query(sql, params);
        return rows as T;
      } finally {
        await connection.end();
      }
    },
    async createDatabase(prefix) {
      const name = `${prefix}_${randomBytes(4).toString('hex')}`;
      await server.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
      return { name, url: `mysql://root@127.0.0.1:${port}/${name}`, drop: async () => undefined }; // the whole server goes in stop()
    },
    async kill() {
      await daemon?.kill('SIGKILL');
    },
    async start() {
      daemon = startDaemon(`mariadbd-${port}`, '/usr/sbin/mariadbd', [
        '--no-defaults', `--datadir=${datadir}`, `--tmpdir=${tmp}`, `--socket=${join(dir, 'mysqld.sock')}`, `--pid-file=${join(dir, 'mysqld.pid')}`,
        `--port=${port}`, '--bind-address=127.0.0.1', '--user=root', '--skip-name-resolve', '--innodb-buffer-pool-size=32M',
        '--innodb-log-file-size=16M', '--max-connections=200', ...serverArgs,
      ]);
      const started = daemon;
      await waitFor(async () => {
        if (!started.isRunning()) throw new Error(`mariadbd exited: ${started.output().slice(-1500)}`);
        const connection = await connect();
        await connection.end();
        return true;
      }, { timeoutMs: 90_000, intervalMs: 200, description: `mariadbd on ${port}` });
    },
    async stop() {
      await daemon?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await server.start();
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

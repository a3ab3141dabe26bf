import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { requireService, SERVICES } from './services';

export interface TestDatabase {
  /** e.g. vanish_test_3f9a1c2b */
  name: string;
  /** mysql://root@127.0.0.1:3306/<name> */
  url: string;
  /** Drops the database (idempotent). */
  drop(): Promise<void>;
}

const { host, port } = SERVICES.mariadb;

async function asRoot<T>(work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection({ host, port, user: 'root', password: '' });
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

/**
 * A database of its own for one test file on the machine's shared MariaDB (root, no password),
 * so parallel workers and engineers never see each other's rows. Drop it in afterAll.
 */
export async function createTestDatabase(prefix = 'vanish_test'): Promise<TestDatabase> {
  if (!/^[a-z0-9_]{1,40}$/.test(prefix)) throw new Error(`bad database prefix: ${prefix}`);
  await requireService('mariadb');
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await asRoot((connection) => connection.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`));
  let dropped = false;
  return {
    name,
    url: `mysql://root@${host}:${port}/${name}`,
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await asRoot((connection) => connection.query(`DROP DATABASE IF EXISTS \`${name}\``));
    },
  };
}

import mysql from 'mysql2/promise';
import type { Knex } from 'knex';
import { silentLogger } from '@vanish/common';
import { sameServerInstance, serverInstanceOf, type ServerInstance } from '@vanish/database';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { requireService } from '@vanish/testkit/services';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { endConnection } from '../src/adapters/db/commit-outcome';

/**
 * The KILL that settles an unconfirmed commit acts on a connection id, which names a connection
 * only on the server process that gave it. Each pooled connection knows which server process it is
 * on; a KILL is sent only from a connection on that same process.
 */
describe('ending an unconfirmed commit\'s connection (MariaDB)', () => {
  let database: TestDatabase;
  let knex: Knex;
  let bystander: mysql.Connection | undefined;

  beforeAll(async () => {
    await requireService('mariadb');
    database = await createTestDatabase('vanish_notes_outcome');
    knex = configureKnex(database.url, { logger: silentLogger });
  });

  afterEach(async () => {
    await bystander?.end().catch(() => undefined);
    bystander = undefined;
  });

  afterAll(async () => {
    await knex?.destroy();
    await database?.drop();
  });

  async function thisServer(): Promise<ServerInstance> {
    const connection = (await knex.client.acquireConnection()) as object;
    try {
      const instance = serverInstanceOf(connection);
      if (!instance) throw new Error('the pool did not record the server instance of its connection');
      return instance;
    } finally {
      await knex.client.releaseConnection(connection);
    }
  }

  /** Another client's connection on the same server: its id is what a stale id would name. */
  async function connectBystander(): Promise<number> {
    bystander = await mysql.createConnection(database.url);
    const [rows] = await bystander.query('SELECT CONNECTION_ID() AS id');
    return Number((rows as Array<{ id: number }>)[0]!.id);
  }

  it('when a connection is made, then it records the server it is on, started when the server says', async () => {
    const instance = await thisServer();
    const [rows] = (await knex.raw("SELECT UNIX_TIMESTAMP() - VARIABLE_VALUE AS startedAt FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'")) as [Array<{ startedAt: number }>];
    expect(Math.abs(instance.startedAt - Number(rows[0]!.startedAt))).toBeLessThanOrEqual(2);
    const [names] = (await knex.raw('SELECT @@hostname AS host, @@port AS port')) as [Array<{ host: string; port: number }>];
    expect(instance.server.startsWith(`${names[0]!.host}:${names[0]!.port}#`)).toBe(true);
  });

  it('when the connection was made on this server process, then it is killed and gone', async () => {
    const id = await connectBystander();
    await expect(endConnection(knex, { id, instance: await thisServer() }, 5000)).resolves.toBe('ended');
    await expect(bystander!.query('SELECT 1')).rejects.toThrow();
  });

  it('when the connection was made on a server process that has since restarted, then its id is left alone on the new one', async () => {
    const id = await connectBystander();
    const here = await thisServer();
    const beforeRestart: ServerInstance = { ...here, startedAt: here.startedAt - 3600 };
    expect(sameServerInstance(beforeRestart, here)).toBe(false);
    await expect(endConnection(knex, { id, instance: beforeRestart }, 5000)).resolves.toBe('gone with its server');
    const [rows] = await bystander!.query('SELECT 1 AS alive');
    expect(rows).toEqual([{ alive: 1 }]);
  });

  it('when the connection was made on another server (a failover\'s promoted replica), then its id is left alone', async () => {
    const id = await connectBystander();
    const here = await thisServer();
    await expect(endConnection(knex, { id, instance: { ...here, server: 'old-primary:3306#1' } }, 5000)).resolves.toBe('gone with its server');
    const [rows] = await bystander!.query('SELECT 1 AS alive');
    expect(rows).toEqual([{ alive: 1 }]);
  });

  it('when the server of the connection is not known, then it is killed as before', async () => {
    const id = await connectBystander();
    await expect(endConnection(knex, { id, instance: undefined }, 5000)).resolves.toBe('ended');
    await expect(bystander!.query('SELECT 1')).rejects.toThrow();
  });
});

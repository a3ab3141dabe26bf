import type { Knex } from 'knex';
import { sameServerInstance, serverInstanceOf, type ServerInstance } from '@vanish/database';

/**
 * What it takes to learn the outcome of a COMMIT whose answer never came (KnexNoteStore's
 * creations). Dialect-aware, like configure-knex.ts: on MySQL/MariaDB a COMMIT can still be on
 * its way to the server while we wait, so the transaction's connection is ended from another one
 * first, and only then are its rows looked for; on SQLite a COMMIT runs synchronously inside the
 * process, so it is never under way while anything else runs.
 */
export function isMysql(knex: Knex): boolean {
  return (knex.client as { config?: { client?: unknown } }).config?.client === 'mysql2';
}

/** A transaction's connection as its server knows it: its id there, and which server process that is. */
export interface ServerConnection {
  id: number;
  /** Unknown when the pool did not record it (a knex made without recordServerInstance). */
  instance: ServerInstance | undefined;
}

/** The transaction's connection (MySQL's CONNECTION_ID() and its server), or null on SQLite. */
export async function connectionOf(knex: Knex, trx: Knex.Transaction): Promise<ServerConnection | null> {
  if (!isMysql(knex)) return null;
  // The transaction's own client hands out its one connection without a round trip.
  const connection = (await trx.client.acquireConnection()) as { threadId?: unknown };
  return typeof connection.threadId === 'number' ? { id: connection.threadId, instance: serverInstanceOf(connection) } : null;
}

/**
 * Ends a connection on the server (KILL CONNECTION) and waits until it is gone: after that, its
 * open transaction has either committed (its COMMIT had arrived) or rolled back, and no COMMIT
 * still on the wire can change that. Throws when the connection is still listed after `withinMs`.
 *
 * Only where the connection was made: when the connection that would send the KILL is on another
 * server process (the database restarted, or a failover moved the writer address to a promoted
 * replica), the old connection ended with its server, and its id there now names somebody
 * else's connection, so nothing is killed ('gone with its server').
 */
export async function endConnection(knex: Knex, target: ServerConnection, withinMs: number): Promise<'ended' | 'gone with its server'> {
  const giveUpAt = Date.now() + withinMs;
  // One pooled connection asks throughout: the server it is on is the one the check was made against.
  const asking = (await knex.client.acquireConnection()) as MysqlConnection;
  // knex runs raw SQL only on a connection of its choosing; mysql2's own promise form asks this one.
  const ask = asking.promise();
  try {
    const here = serverInstanceOf(asking);
    if (target.instance && here && !sameServerInstance(target.instance, here)) return 'gone with its server';
    try {
      await ask.query('KILL CONNECTION ?', [target.id]);
    } catch (err) {
      // ER_NO_SUCH_THREAD: it is gone already, which is what we want.
      if ((err as { errno?: unknown }).errno !== 1094) throw err;
    }
    for (;;) {
      const [rows] = (await ask.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?', [target.id])) as [Array<{ n: number }>, unknown];
      if (Number(rows[0]?.n ?? 0) === 0) return 'ended';
      if (Date.now() > giveUpAt) throw new Error('the connection of an unconfirmed commit did not end in time');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await knex.client.releaseConnection(asking);
  }
}

/** A pooled mysql2 connection (its callback form; `promise()` wraps it). */
type MysqlConnection = { promise(): { query(sql: string, values: unknown[]): Promise<[unknown, unknown]> } };

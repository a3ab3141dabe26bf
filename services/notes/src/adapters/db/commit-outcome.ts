import type { Knex } from 'knex';
import { sameServerInstance, serverInstanceOf, type ServerInstance } from '@vanish/database';

/**
 * What it takes to learn the outcome of a COMMIT whose answer never came (KnexNoteStore's
 * creations). Dialect-aware, like configure-knex.ts: on MySQL/MariaDB a COMMIT can still be on
 * its way to the server while we wait, so the transaction's connection is ended from another one
 * first, and only then are its rows looked for; on SQLite each file has one connection on the process's
 * SQLite thread (SqliteWorkerClient), which runs statements in the order they were sent, so the look for
 * the rows runs only after the COMMIT has finished, whatever the wait for its answer.
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
 * replica or to another Galera node), the old connection ended with its server, and its id there
 * now names somebody else's connection, so nothing is killed ('gone with its server'). With Galera
 * behind HAProxy the writer address moves only when the check marks the writer down (dead, or cut
 * off from its cluster and so unable to commit anything) and does not move back when it returns
 * (docs/scaling.md): what the old writer committed is what the cluster ordered, which a causal read
 * on the new writer sees (committedRows).
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

/**
 * Runs a SELECT as a causal read where the database is a Galera node: the node first applies every
 * writeset the cluster had ordered when the read began (wsrep_sync_wait = 1), so a COMMIT the old
 * writer got through before it died is seen on the new one even if that node has not applied it yet.
 * On a MariaDB without Galera the setting changes nothing; MySQL (no SET STATEMENT, 1064) and a
 * MariaDB built without wsrep (1193) get the plain read. On SQLite, the plain read.
 */
export async function committedRows<T>(knex: Knex, query: Knex.QueryBuilder): Promise<T[]> {
  if (!isMysql(knex)) return (await query) as T[];
  const { sql, bindings } = query.toSQL().toNative();
  try {
    const [rows] = (await knex.raw(`SET STATEMENT wsrep_sync_wait = 1 FOR ${sql}`, bindings as readonly Knex.RawBinding[])) as unknown as [T[], unknown];
    return rows;
  } catch (err) {
    const errno = (err as { errno?: unknown }).errno;
    if (errno !== 1064 && errno !== 1193) throw err;
    return (await knex.raw(sql, bindings as readonly Knex.RawBinding[]) as unknown as [T[], unknown])[0];
  }
}

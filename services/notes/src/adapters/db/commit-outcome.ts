import type { Knex } from 'knex';

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

/** The server-side id of the transaction's connection (MySQL's CONNECTION_ID()), or null on SQLite. */
export async function connectionIdOf(knex: Knex, trx: Knex.Transaction): Promise<number | null> {
  if (!isMysql(knex)) return null;
  // The transaction's own client hands out its one connection without a round trip.
  const connection = (await trx.client.acquireConnection()) as { threadId?: unknown };
  return typeof connection.threadId === 'number' ? connection.threadId : null;
}

/**
 * Ends a connection on the server (KILL CONNECTION) and waits until it is gone: after that, its
 * open transaction has either committed (its COMMIT had arrived) or rolled back, and no COMMIT
 * still on the wire can change that. Throws when the connection is still listed after `withinMs`.
 */
export async function endConnection(knex: Knex, connectionId: number, withinMs: number): Promise<void> {
  const giveUpAt = Date.now() + withinMs;
  try {
    await knex.raw('KILL CONNECTION ?', [connectionId]);
  } catch (err) {
    // ER_NO_SUCH_THREAD: it is gone already, which is what we want.
    if ((err as { errno?: unknown }).errno !== 1094) throw err;
  }
  for (;;) {
    const [rows] = (await knex.raw('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ?', [connectionId])) as [Array<{ n: number }>];
    if (Number(rows[0]?.n ?? 0) === 0) return;
    if (Date.now() > giveUpAt) throw new Error('the connection of an unconfirmed commit did not end in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

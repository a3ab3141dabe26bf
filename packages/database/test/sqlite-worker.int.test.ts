import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Knex } from 'knex';
import { silentLogger } from '@vanish/common';
import { commitOnSqliteThread, configureKnex, isDatabaseUnavailable, isRolledBack, runStatements, runsOnSqliteThread, SqliteWorkerConnection } from '../src';

describe('SQLite through its worker thread (configureKnex with sqlite:)', () => {
  let dir: string;
  let knex: Knex;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vanish-sqlite-worker-'));
    knex = configureKnex(`sqlite:${join(dir, 'test.db')}`, { logger: silentLogger });
    await knex.schema.createTable('things', (table) => {
      table.increments('id');
      table.string('name').notNullable().unique();
      table.binary('blob');
    });
  });

  afterAll(async () => {
    await knex.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when a statement runs, then it runs on another thread, and this one keeps serving while it does', async () => {
    let ticks = 0;
    const timer = setInterval(() => { ticks += 1; }, 5);
    // A statement that keeps SQLite busy for a while: on this thread it would block every timer.
    const [row] = await knex.raw('WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500000) SELECT count(*) AS c FROM n') as Array<{ c: number }>;
    clearInterval(timer);
    expect(row!.c).toBe(500_000);
    // The timer fired while the statement ran (on this thread it could fire once, after): it did not hold this thread.
    expect(ticks).toBeGreaterThanOrEqual(3);
    expect(threadId).toBe(0);
  });

  it('when rows hold blobs, then they come back as Buffers, and inserts report their ids', async () => {
    const [id] = await knex('things').insert({ name: 'a', blob: Buffer.from([1, 2, 3]) });
    expect(id).toBeGreaterThan(0);
    const row = await knex('things').where({ id }).first();
    expect(Buffer.isBuffer(row.blob)).toBe(true);
    expect([...(row.blob as Buffer)]).toEqual([1, 2, 3]);
    expect(await knex('things').where({ id }).update({ name: 'b' })).toBe(1);
  });

  it('when a statement fails, then its error keeps SQLite\'s code, and a failed transaction rolls back', async () => {
    await knex('things').insert({ name: 'unique-one' });
    await expect(knex('things').insert({ name: 'unique-one' })).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
    await expect(knex.transaction(async (trx) => {
      await trx('things').insert({ name: 'rolled-back' });
      throw new Error('no');
    })).rejects.toThrow('no');
    expect(await knex('things').where({ name: 'rolled-back' }).first()).toBeUndefined();
    await knex.transaction(async (trx) => { await trx('things').insert({ name: 'committed' }); });
    expect(await knex('things').where({ name: 'committed' }).first()).toBeDefined();
  });

  it('when a second connection to the same file writes during a write transaction, then it waits for the commit without holding the thread', async () => {
    const other = configureKnex(`sqlite:${join(dir, 'test.db')}`, { logger: silentLogger });
    try {
      let waiting: Promise<unknown> | undefined;
      await knex.transaction(async (trx) => {
        await trx('things').insert({ name: 'held' });
        waiting = other('things').insert({ name: 'waited' }).then((ids) => ids);
        await new Promise((resolve) => setTimeout(resolve, 100));
        // The transaction's own statements still run: the other connection's retries do not hold the thread.
        await trx('things').insert({ name: 'held-2' });
      });
      await waiting;
      expect((await knex('things').whereIn('name', ['held', 'held-2', 'waited']).select('name')).map((row: { name: string }) => row.name).sort())
        .toEqual(['held', 'held-2', 'waited']);
    } finally {
      await other.destroy();
    }
  });

  it('when the worker thread is gone, then statements fail as a database that is unavailable', async () => {
    const connection = await SqliteWorkerConnection.open(join(dir, 'other.db'), ['journal_mode = WAL']);
    await connection.close();
    const failure = await connection.query('SELECT 1', []).catch((err: unknown) => err);
    expect(isDatabaseUnavailable(failure)).toBe(true);
  });

  it('when statements run together in a transaction, then they all commit, and a refused one fails the transaction with SQLite\'s code and keeps none', async () => {
    expect(runsOnSqliteThread(knex)).toBe(true);
    await knex.transaction(async (trx) => {
      await runStatements(trx, [
        { sql: 'insert into `things` (`name`, `blob`) values (?, ?), (?, ?)', bindings: ['together-1', Buffer.from([7]), 'together-2', null] },
        { sql: 'update `things` set `name` = ? where `name` = ?', bindings: ['together-3', 'together-2'] },
      ]);
    });
    expect((await knex('things').whereIn('name', ['together-1', 'together-2', 'together-3']).select('name')).map((row: { name: string }) => row.name).sort())
      .toEqual(['together-1', 'together-3']);
    await expect(knex.transaction(async (trx) => {
      await runStatements(trx, [
        { sql: 'insert into `things` (`name`) values (?)', bindings: ['never-kept'] },
        { sql: 'insert into `things` (`name`) values (?)', bindings: ['together-1'] },
        { sql: 'insert into `things` (`name`) values (?)', bindings: ['never-run'] },
      ]);
    })).rejects.toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(await knex('things').whereIn('name', ['never-kept', 'never-run']).select('name')).toEqual([]);
  });

  it('when statements are committed in one message, then all are kept, and a refused one rolls back all of them and says so', async () => {
    const queries: string[] = [];
    const onQuery = (query: { sql: string }): void => { queries.push(query.sql); };
    knex.on('query', onQuery);
    const order: string[] = [];
    try {
      await commitOnSqliteThread(knex, [
        { sql: 'insert into `things` (`name`, `blob`) values (?, ?)', bindings: ['one-message-1', Buffer.from([9, 8])] },
        { sql: 'insert into `things` (`name`) values (?)', bindings: ['one-message-2'] },
      ], () => order.push('before send'));
      order.push('committed');
    } finally {
      knex.off('query', onQuery);
    }
    expect(order).toEqual(['before send', 'committed']);
    expect(queries).toEqual(['BEGIN IMMEDIATE', 'insert into `things` (`name`, `blob`) values (?, ?)', 'insert into `things` (`name`) values (?)', 'COMMIT']);
    const kept = await knex('things').whereIn('name', ['one-message-1', 'one-message-2']).orderBy('name');
    expect(kept.map((row: { name: string }) => row.name)).toEqual(['one-message-1', 'one-message-2']);
    expect([...(kept[0].blob as Buffer)]).toEqual([9, 8]);

    const refused = await commitOnSqliteThread(knex, [
      { sql: 'insert into `things` (`name`) values (?)', bindings: ['one-message-never'] },
      { sql: 'insert into `things` (`name`) values (?)', bindings: ['one-message-1'] },
    ]).catch((err: unknown) => err);
    expect(refused).toMatchObject({ code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(isRolledBack(refused)).toBe(true);
    expect(await knex('things').where({ name: 'one-message-never' }).first()).toBeUndefined();
    // The connection is outside a transaction again: the next one commits.
    await commitOnSqliteThread(knex, [{ sql: 'insert into `things` (`name`) values (?)', bindings: ['one-message-after'] }]);
    expect(await knex('things').where({ name: 'one-message-after' }).first()).toBeDefined();
  });

  it('when a transaction in one message meets another connection\'s write, then it waits for that commit, and one refused before sending sends nothing', async () => {
    const other = configureKnex(`sqlite:${join(dir, 'test.db')}`, { logger: silentLogger });
    try {
      let committed: Promise<void> | undefined;
      await other.transaction(async (trx) => {
        await trx('things').insert({ name: 'other-first' });
        committed = commitOnSqliteThread(knex, [{ sql: 'insert into `things` (`name`) values (?)', bindings: ['one-message-waited'] }]);
        await new Promise((resolve) => setTimeout(resolve, 50));
        await trx('things').insert({ name: 'other-second' });
      });
      await committed;
      expect((await knex('things').whereIn('name', ['other-first', 'other-second', 'one-message-waited']).select('name')).map((row: { name: string }) => row.name).sort())
        .toEqual(['one-message-waited', 'other-first', 'other-second']);
    } finally {
      await other.destroy();
    }
    const refusal = new Error('abandoned');
    await expect(commitOnSqliteThread(knex, [{ sql: 'insert into `things` (`name`) values (?)', bindings: ['never-sent'] }], () => { throw refusal; }))
      .rejects.toBe(refusal);
    expect(isRolledBack(refusal)).toBe(false);
    expect(await knex('things').where({ name: 'never-sent' }).first()).toBeUndefined();
  });

  it('when a transaction starts, then its BEGIN goes with its first statement, and transactions one after another each keep their own rows', async () => {
    const connection = await SqliteWorkerConnection.open(join(dir, 'begin.db'), ['journal_mode = WAL']);
    try {
      await connection.query('create table t (v integer)', []);
      // BEGIN is answered at once (no round trip); the INSERT after it runs inside the transaction.
      await connection.query('BEGIN;', []);
      await connection.query('insert into t (v) values (?)', [1]);
      await connection.query('ROLLBACK', []);
      await connection.query('BEGIN;', []);
      await connection.queryAll([{ sql: 'insert into t (v) values (?)', bindings: [2] }, { sql: 'insert into t (v) values (?)', bindings: [3] }]);
      await connection.query('COMMIT;', []);
      const answer = await connection.query('select v from t order by v', []);
      expect(answer.rows).toEqual([{ v: 2 }, { v: 3 }]);
      // Outside a transaction a statement commits by itself, as before.
      await connection.query('insert into t (v) values (?)', [4]);
      await expect(connection.query('ROLLBACK', [])).rejects.toMatchObject({ code: 'SQLITE_ERROR' });
      expect((await connection.query('select count(*) as n from t', [])).rows).toEqual([{ n: 3 }]);
    } finally {
      await connection.close();
    }
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { Knex } from 'knex';
import { silentLogger } from '@vanish/common';
import { configureKnex, isDatabaseUnavailable, SqliteWorkerConnection } from '../src';

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
});

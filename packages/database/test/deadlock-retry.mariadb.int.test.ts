import type { Knex } from 'knex';
import { setTimeout as sleep } from 'node:timers/promises';
import { silentLogger } from '@vanish/common';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { configureKnex, isDeadlock, retryingDeadlocks } from '../src';

/**
 * A real InnoDB deadlock: the error knex and mysql2 raise is the one isDeadlock knows, and
 * retryingDeadlocks runs the victim again once the other transaction is through.
 */
describe('retryingDeadlocks on MariaDB', () => {
  let database: TestDatabase;
  let knex: Knex;

  beforeAll(async () => {
    database = await createTestDatabase('vanish_deadlock');
    knex = configureKnex(database.url, { logger: silentLogger });
    await knex.schema.createTable('counters', (t) => {
      t.integer('id').primary();
      t.integer('value').notNullable();
    });
    await knex('counters').insert(Array.from({ length: 40 }, (_, i) => ({ id: i + 1, value: 0 })));
  });

  afterAll(async () => {
    await knex?.destroy();
    await database?.drop();
  });

  it('when a transaction is chosen as the victim of a deadlock, then it is run again and commits, and the other one commits too', async () => {
    const errors: unknown[] = [];
    let runs = 0;
    // The other transaction holds row 2 and more rows besides, so InnoDB rolls back the smaller one: ours.
    let otherTransaction: Promise<void> | undefined;
    const ours = retryingDeadlocks(async () => {
      runs += 1;
      try {
        await knex.transaction(async (trx) => {
          await trx('counters').where({ id: 1 }).increment('value', 1);
          if (runs === 1) {
            otherTransaction = knex.transaction(async (other) => {
              await other('counters').where('id', '>=', 2).increment('value', 10);
              await sleep(300); // ours now waits for row 2
              await other('counters').where({ id: 1 }).increment('value', 10);
            });
            await sleep(100);
          }
          await trx('counters').where({ id: 2 }).increment('value', 1);
        });
      } catch (err) {
        errors.push(err);
        throw err;
      }
      return 'committed';
    });

    await expect(ours).resolves.toBe('committed');
    await otherTransaction;
    expect(runs).toBe(2);
    expect(errors).toHaveLength(1);
    expect(isDeadlock(errors[0])).toBe(true);
    const rows = await knex('counters').whereIn('id', [1, 2]).orderBy('id').select('value');
    expect(rows.map((row: { value: number }) => row.value)).toEqual([11, 11]);
  });
});

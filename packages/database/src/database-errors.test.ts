import {
  isCommitRefusedByNode, isConnectRefused, isConnectionLost, isDatabaseUnavailable, isDeadlock, isNodeNotReady, isRetryableAbort, isSafeToRetryTransaction, retryingDeadlocks, retryingTransaction,
} from './database-errors';

const deadlock = () => Object.assign(new Error('Deadlock found when trying to get lock'), { code: 'ER_LOCK_DEADLOCK', errno: 1213 });

describe('retryingDeadlocks', () => {
  it('when the write is a deadlock victim twice, then it runs a third time and its result is returned', async () => {
    let runs = 0;
    const result = await retryingDeadlocks(async () => {
      runs += 1;
      if (runs < 3) throw deadlock();
      return 'written';
    });
    expect(result).toBe('written');
    expect(runs).toBe(3);
  });

  it('when every attempt is a deadlock victim, then the last error is thrown after the given number of attempts', async () => {
    let runs = 0;
    await expect(retryingDeadlocks(async () => { runs += 1; throw deadlock(); }, 4)).rejects.toMatchObject({ code: 'ER_LOCK_DEADLOCK' });
    expect(runs).toBe(4);
  });

  it('when the error is anything else (a lost connection, a constraint), then it is thrown at once', async () => {
    let runs = 0;
    const lost = Object.assign(new Error('Connection lost'), { code: 'PROTOCOL_CONNECTION_LOST' });
    await expect(retryingDeadlocks(async () => { runs += 1; throw lost; })).rejects.toBe(lost);
    expect(runs).toBe(1);
  });

  it('isDeadlock knows InnoDB by code and by errno, and SQLite busy', () => {
    expect(isDeadlock(deadlock())).toBe(true);
    expect(isDeadlock({ errno: 1213 })).toBe(true);
    expect(isDeadlock({ code: 'SQLITE_BUSY' })).toBe(true);
    expect(isDeadlock({ code: 'ER_DUP_ENTRY' })).toBe(false);
    expect(isDeadlock(undefined)).toBe(false);
  });
});

const certificationConflict = () => Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), { code: 'ER_LOCK_DEADLOCK', errno: 1213 });
const notReady = () => Object.assign(new Error('WSREP has not yet prepared node for application use'), { code: 'ER_UNKNOWN_COM_ERROR', errno: 1047 });
const lost = () => Object.assign(new Error('Connection lost: The server closed the connection.'), { code: 'PROTOCOL_CONNECTION_LOST', fatal: true });

/**
 * A knex stand-in whose transaction runs `work` and then "sends COMMIT": `failures` say, per try,
 * whether the try fails in the work (before COMMIT) or at COMMIT, and with what.
 */
function fakeKnex(failures: Array<{ at: 'work' | 'commit'; error: Error } | undefined>) {
  let tries = 0;
  const committed: number[] = [];
  const knex = {
    async transaction<T>(work: (trx: unknown) => Promise<T>): Promise<T> {
      const failure = failures[tries];
      tries += 1;
      if (failure?.at === 'work') throw failure.error;
      const result = await work({});
      if (failure?.at === 'commit') throw failure.error;
      committed.push(tries);
      return result;
    },
  };
  return { knex: knex as unknown as Parameters<typeof retryingTransaction>[0], tries: () => tries, committed };
}

describe('Galera failures', () => {
  it('classifies a node without quorum (1047), a lost connection and a certification conflict', () => {
    expect(isNodeNotReady(notReady())).toBe(true);
    expect(isNodeNotReady({ errno: 1047 })).toBe(true);
    expect(isNodeNotReady(certificationConflict())).toBe(false);
    expect(isConnectionLost(lost())).toBe(true);
    expect(isConnectionLost(new Error('outer', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) }))).toBe(true);
    expect(isConnectionLost(notReady())).toBe(false);
    expect(isRetryableAbort(certificationConflict())).toBe(true);
    expect(isRetryableAbort(notReady())).toBe(true);
    expect(isRetryableAbort(lost())).toBe(false);
    // A node without quorum answers 503 once the retries are spent.
    expect(isDatabaseUnavailable(notReady())).toBe(true);
  });

  it('a COMMIT refused by a node that lost quorum (1180, "Not connected to Primary Component") is the database unavailable, never retried', () => {
    const refused = Object.assign(new Error('COMMIT; - Got error 6 "No such device or address" during COMMIT (provider status: Not connected to Primary Component)'), { code: 'ER_ERROR_DURING_COMMIT', errno: 1180 });
    expect(isCommitRefusedByNode(refused)).toBe(true);
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(isDatabaseUnavailable(new Error('outer', { cause: { errno: 1180 } }))).toBe(true);
    expect(isSafeToRetryTransaction(refused, true)).toBe(false);
    expect(isCommitRefusedByNode(deadlock())).toBe(false);
  });

  it('a transaction is safe to run again after an abort, or a lost connection before its COMMIT, never after a COMMIT whose answer was lost', () => {
    expect(isSafeToRetryTransaction(certificationConflict(), true)).toBe(true);
    expect(isSafeToRetryTransaction(certificationConflict(), false)).toBe(true);
    expect(isSafeToRetryTransaction(notReady(), false)).toBe(true);
    expect(isSafeToRetryTransaction(lost(), false)).toBe(true);
    expect(isSafeToRetryTransaction(lost(), true)).toBe(false);
    expect(isSafeToRetryTransaction(notReady(), true)).toBe(false);
    expect(isSafeToRetryTransaction(Object.assign(new Error('dup'), { code: 'ER_DUP_ENTRY', errno: 1062 }), false)).toBe(false);
  });

  it('retryingDeadlocks also runs a statement again that a node without quorum refused', async () => {
    let runs = 0;
    await expect(retryingDeadlocks(async () => {
      runs += 1;
      if (runs === 1) throw notReady();
      return 'written';
    })).resolves.toBe('written');
    expect(runs).toBe(2);
  });

  it('retryingTransaction runs again a transaction refused at COMMIT by certification, or cut or refused before it', async () => {
    const { knex, tries, committed } = fakeKnex([
      { at: 'commit', error: certificationConflict() }, { at: 'work', error: lost() }, { at: 'work', error: notReady() }, undefined,
    ]);
    await expect(retryingTransaction(knex, async () => 'kept')).resolves.toBe('kept');
    expect(tries()).toBe(4);
    expect(committed).toEqual([4]);
  });

  it('retryingTransaction never runs again a transaction whose COMMIT was sent and whose connection was lost: the caller must learn what was kept', async () => {
    const { knex, tries } = fakeKnex([{ at: 'commit', error: lost() }, undefined]);
    await expect(retryingTransaction(knex, async () => 'kept')).rejects.toMatchObject({ code: 'PROTOCOL_CONNECTION_LOST' });
    expect(tries()).toBe(1);
  });

  it('retryingTransaction starts no new try once the caller\'s deadline has passed', async () => {
    const { knex, tries } = fakeKnex([{ at: 'work', error: lost() }, undefined]);
    await expect(retryingTransaction(knex, async () => 'kept', 5, { giveUpAt: Date.now() })).rejects.toMatchObject({ code: 'PROTOCOL_CONNECTION_LOST' });
    expect(tries()).toBe(1);
  });
});

describe('a database that refuses connections', () => {
  const refusedConnect = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED', errno: -111, fatal: true });

  it('when no connection can be made, then it is told apart from one lost mid-transaction, and a transaction is not tried again for it', async () => {
    expect(isConnectRefused(refusedConnect())).toBe(true);
    expect(isConnectRefused(new Error('wrapped', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND db'), { code: 'ENOTFOUND' }) }))).toBe(true);
    expect(isConnectRefused(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', fatal: true }))).toBe(false);
    let tries = 0;
    const knex = { transaction: async () => { tries += 1; throw refusedConnect(); } } as never;
    await expect(retryingTransaction(knex, async () => 1)).rejects.toThrow('ECONNREFUSED');
    expect(tries).toBe(1); // no second try, and so no pause before it
  });
});


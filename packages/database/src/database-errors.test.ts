import { isDeadlock, retryingDeadlocks } from './database-errors';

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

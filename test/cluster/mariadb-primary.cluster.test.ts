import { sleep, startSystem, type System } from '../resilience/support/system';
import { expectCreatesSurviveDatabaseFault } from './support/creates-through-database-fault';
import { startOwnMariaDb, type OwnMariaDb } from './support/mariadb-server';

// The four services as processes (needs `npm run build`); notes' database on a MariaDB of the test's
// own, which is SIGKILLed (a crashed primary) and started again while notes are created.
jest.setTimeout(600_000);

describe('MariaDB primary killed and restarted under creates', () => {
  let db: OwnMariaDb;
  let sys: System;

  beforeAll(async () => {
    db = await startOwnMariaDb();
    sys = await startSystem({ notesDatabase: { port: db.port, database: await db.createDatabase('cluster_notes') } });
  });

  afterAll(async () => {
    await sys?.stop();
    await db?.stop();
  });

  it('when the primary dies and comes back, then creates answer 200 or 503 in the error shape, never hang, and every 200 is readable after', async () => {
    await expectCreatesSurviveDatabaseFault(sys, 'mariadb primary crash', async () => {
      await db.kill();
      const killedAt = Date.now();
      await sleep(5_000);
      await db.start();
      return { restartedMs: Date.now() - killedAt };
    });
  });
});

import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { sleep, startSystem, type System } from '../resilience/support/system';
import { expectCreatesSurviveDatabaseFault } from './support/creates-through-database-fault';
import { startPrimaryAndReplica, type MariaDbPrimaryAndReplica } from './support/mariadb-replication';

// The four services as processes (needs `npm run build`); notes' DATABASE_URL names a writer address (a
// TCP proxy standing in for a VIP, ProxySQL or a cloud's writer endpoint) in front of a MariaDB primary
// with a semi-synchronous GTID replica. The primary is SIGKILLed under creates, the replica promoted and
// the writer address switched to it, as a failover manager does.
jest.setTimeout(600_000);

/** How long a failover manager takes to decide the primary is gone (MaxScale's monitor, an operator). */
const DETECTION_MS = 1_000;

describe('MariaDB primary killed, replica promoted, writer address switched, under creates', () => {
  let pair: MariaDbPrimaryAndReplica;
  let writer: FaultProxy;
  let sys: System;

  beforeAll(async () => {
    pair = await startPrimaryAndReplica();
    writer = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: pair.primary.port });
    sys = await startSystem({ notesDatabase: { port: writer.port, database: await pair.primary.createDatabase('cluster_switch') } });
  });

  afterAll(async () => {
    await sys?.stop();
    await writer?.close();
    await pair?.stop();
  });

  it('when the primary dies and the writer address moves to the promoted replica, then creates answer 200 or 503 in the error shape, never hang, and every 200 is readable on the new primary', async () => {
    await expectCreatesSurviveDatabaseFault(sys, 'mariadb switch to a promoted replica', async () => {
      await pair.primary.kill();
      const killedAt = Date.now();
      await sleep(DETECTION_MS);
      const promotedMs = await pair.promoteReplica();
      writer.retarget('127.0.0.1', pair.replica.port);
      return { promotedMs, switchedMs: Date.now() - killedAt };
    });
  });
});

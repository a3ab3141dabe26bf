import { waitFor } from '@vanish/testkit/net';
import { startOwnMariaDb, type OwnMariaDb } from './mariadb-server';

/** Binary logs with GTIDs on both servers, so either can be the primary. */
const BINLOG = ['--log-bin=mariadb-bin', '--binlog-format=ROW', '--gtid-strict-mode=1', '--log-slave-updates=1'];

/**
 * A MariaDB primary and a GTID replica of it (Debian's 10.11, --no-defaults, ports of their own), with
 * semi-synchronous replication at AFTER_SYNC: a commit is in the replica's relay log before the client
 * hears of it, which is what lets a switch keep every acknowledged commit (docs/scaling.md).
 */
export interface MariaDbPrimaryAndReplica {
  readonly primary: OwnMariaDb;
  readonly replica: OwnMariaDb;
  /**
   * What a failover manager does once the primary is gone: the replica applies all it received,
   * stops replicating and takes writes. Resolves with the time it took.
   */
  promoteReplica(): Promise<number>;
  stop(): Promise<void>;
}

export async function startPrimaryAndReplica(): Promise<MariaDbPrimaryAndReplica> {
  const started: OwnMariaDb[] = [];
  const stop = async (): Promise<void> => {
    for (const server of started) await server.stop();
  };
  try {
    // Both at once: most of the time is mariadb-install-db's.
    const servers = await Promise.allSettled([
      startOwnMariaDb(['--server-id=1', ...BINLOG,
        '--rpl-semi-sync-master-enabled=1', '--rpl-semi-sync-master-wait-point=AFTER_SYNC',
        // Never fall back to asynchronous replication during the test: an acknowledged commit must be on the replica.
        '--rpl-semi-sync-master-timeout=600000']),
      startOwnMariaDb(['--server-id=2', ...BINLOG, '--relay-log=relay-bin', '--read-only=1', '--rpl-semi-sync-slave-enabled=1']),
    ]);
    for (const server of servers) if (server.status === 'fulfilled') started.push(server.value);
    const failed = servers.find((server): server is PromiseRejectedResult => server.status === 'rejected');
    if (failed) throw failed.reason;
    const [primary, replica] = started as [OwnMariaDb, OwnMariaDb];
    await replica.query(`CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${primary.port}, MASTER_USER='root', MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos, MASTER_CONNECT_RETRY=1`);
    await replica.query('START SLAVE');
    await waitFor(async () => {
      const rows = await primary.query<Array<{ Variable_name: string; Value: string }>>("SHOW STATUS LIKE 'Rpl_semi_sync_master_%'");
      const status = Object.fromEntries(rows.map((row) => [row.Variable_name, row.Value]));
      return status.Rpl_semi_sync_master_status === 'ON' && status.Rpl_semi_sync_master_clients === '1';
    }, { timeoutMs: 30_000, intervalMs: 200, description: 'the replica acknowledging commits (semi-sync)' });
    return {
      primary, replica, stop,
      async promoteReplica() {
        const startedAt = Date.now();
        // Everything received (the relay log) applied: the executed position caught up with the received one.
        await waitFor(async () => {
          const [status] = await replica.query<Array<Record<string, string>>>('SHOW SLAVE STATUS');
          const [{ applied }] = await replica.query<Array<{ applied: string }>>('SELECT @@gtid_slave_pos AS applied');
          return status !== undefined && status.Gtid_IO_Pos === applied;
        }, { timeoutMs: 30_000, intervalMs: 50, description: 'the replica to apply its relay log' });
        await replica.query('STOP SLAVE');
        await replica.query('RESET SLAVE ALL');
        await replica.query('SET GLOBAL read_only = 0');
        return Date.now() - startedAt;
      },
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

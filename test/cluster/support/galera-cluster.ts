import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectSocket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import type { TestDatabase } from '@vanish/testkit/mariadb';
import { freePort, waitFor } from '@vanish/testkit/net';
import { requireBinary, startDaemon, type Daemon } from './daemons';

const run = promisify(execFile);

const GALERA_PROVIDER = '/usr/lib/galera/libgalera_smm.so';

/**
 * State transfer by rsync. mariabackup (the production choice, no donor blocked for the copy) was
 * tried here first: with Debian's 10.11.19 and galera-4 26.4.23 every transfer failed on the donor,
 * whose mariabackup was refused `BACKUP STAGE START` with 1047 "WSREP has not yet prepared node for
 * application use" (3 of 3 tries); GALERA_SST=mariabackup tries it again.
 */
const SST_METHOD = process.env.GALERA_SST ?? 'rsync';

/**
 * Group communication timings (evs.*): how soon the survivors stop waiting for a node that went
 * silent. Galera's defaults (suspect 5 s, inactive 15 s) hold every write of the cluster for about
 * 5 s when a node dies; here, a loopback cluster on a loaded two-core machine, a node is suspected
 * after 1.5 s of silence and dropped after 3 s. docs/scaling.md gives the values for a real network.
 */
export const EVS_OPTIONS = [
  'evs.keepalive_period=PT0.3S', 'evs.inactive_check_period=PT0.5S', 'evs.suspect_timeout=PT1.5S', 'evs.inactive_timeout=PT3S',
  'evs.install_timeout=PT3S', 'evs.join_retrans_period=PT0.5S',
];

/**
 * HAProxy's health check of a Galera node (external-check): up only when the node says it is Synced
 * (wsrep_local_state 4) and ready (wsrep_ready ON), that is in the primary component and able to take
 * writes. HAProxy's own `mysql-check` only sees that mariadbd answers the handshake, which a node cut
 * off from its cluster (non-primary, every statement refused with 1047) still does: the galera
 * cluster test measures the difference (`checkSees`).
 */
const CHECK_SCRIPT = `#!/bin/sh
# HAProxy external-check: $3 $4 are the server's address and port.
state=$(timeout 2 mariadb --no-defaults --protocol=tcp -h "$3" -P "$4" -u root --connect-timeout=1 -N -B -e \\
  "SELECT CONCAT(MAX(IF(VARIABLE_NAME='WSREP_LOCAL_STATE',VARIABLE_VALUE,'')),'/',MAX(IF(VARIABLE_NAME='WSREP_READY',VARIABLE_VALUE,''))) FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('WSREP_LOCAL_STATE','WSREP_READY')" 2>/dev/null) || exit 1
[ "$state" = "4/ON" ]
`;

export interface GaleraNode {
  readonly name: string;
  /** Its client port (mariadbd's --port); HAProxy's server line points here. */
  readonly port: number;
  isRunning(): boolean;
  /** One statement as root over a connection of its own, straight to this node (not through HAProxy). */
  query<T = unknown>(sql: string, params?: unknown[]): Promise<T>;
  /** wsrep_local_state_comment, wsrep_cluster_status, wsrep_cluster_size, wsrep_ready; null when it does not answer. */
  status(): Promise<{ state: string; cluster: string; size: number; ready: string } | null>;
  /** SIGKILL: a crashed node. */
  kill(): Promise<void>;
  /** Starts it again on its data directory (it rejoins by IST or SST), resolving once it is Synced. */
  start(): Promise<void>;
}

export interface HaproxyServerState {
  name: string;
  /** UP, DOWN, MAINT, ... as HAProxy's `show stat` says. */
  status: string;
  backup: boolean;
  /** Sessions open on it now. */
  sessions: number;
}

export interface GaleraCluster {
  readonly nodes: readonly [GaleraNode, GaleraNode, GaleraNode];
  /** HAProxy's port: the one writer address the services' DATABASE_URL names. */
  readonly writerPort: number;
  /** The HAProxy server lines as HAProxy sees them now. */
  servers(): Promise<HaproxyServerState[]>;
  /** The node new connections to the writer address go to (the stick table's, else the first one HAProxy has UP). */
  writer(): Promise<GaleraNode | undefined>;
  /** A database on the cluster (created through the writer address, so on every node). */
  createDatabase(prefix: string): Promise<TestDatabase>;
  /**
   * Cuts node `index` off from its peers' replication traffic (Galera's gmcast.isolate: every group
   * connection closed and refused) while HAProxy and clients still reach it: it loses quorum on its own.
   * Not with the fault proxy: Galera advertises each node's own listening address and the peers dial it
   * directly, so proxies in front of the group ports were bypassed (measured: with every proxy cut, the
   * node stayed Primary/Synced).
   */
  partition(index: number): Promise<void>;
  heal(index: number): Promise<void>;
  stop(): Promise<void>;
}

interface NodePorts {
  client: number;
  gcomm: number;
  ist: number;
  sst: number;
}

export interface GaleraOptions {
  /** HAProxy check interval and how many failed/passed checks mark a server down/up. */
  check?: { interMs: number; fall: number; rise: number };
}

/**
 * Three MariaDB Galera nodes (Debian's mariadbd 10.11 with galera-4, state transfer by rsync, see
 * SST_METHOD) and HAProxy in front as the single writer address, all on loopback ports of their own,
 * data under a temporary directory: never the machine's MariaDB on 3306.
 */
export async function startGaleraCluster(options: GaleraOptions = {}): Promise<GaleraCluster> {
  requireBinary('/usr/sbin/mariadbd', 'apt-get install -y mariadb-server');
  requireBinary(GALERA_PROVIDER, 'apt-get install -y galera-4');
  requireBinary('/usr/bin/mariadb-backup', 'apt-get install -y mariadb-backup');
  requireBinary('/usr/sbin/haproxy', 'apt-get install -y haproxy');
  requireBinary('/usr/bin/socat', 'apt-get install -y socat');
  // Every 2 s (one check forks the mariadb client: about 60 ms of CPU, and 0.4 s to answer on this
  // machine under its usual load); a dead writer is marked down sooner, by its refused connections.
  const check = options.check ?? { interMs: 2000, fall: 2, rise: 2 };
  const dir = mkdtempSync(join(tmpdir(), 'vanish-galera-'));
  const daemons: Array<Daemon | undefined> = [undefined, undefined, undefined];
  let haproxy: Daemon | undefined;
  const stop = async (): Promise<void> => {
    await haproxy?.kill('SIGKILL');
    for (const daemon of daemons) await daemon?.kill('SIGKILL');
    // GALERA_KEEP=1 keeps the nodes' directories (their logs, the state transfer's) for a look after a failure.
    if (!process.env.GALERA_KEEP) rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: NodePorts[] = [];
    for (let i = 0; i < 3; i += 1) ports.push({ client: await freePort(), gcomm: await freePort(), ist: await freePort(), sst: await freePort() });
    const nodeDir = (i: number) => join(dir, `node${i + 1}`);
    const configFile = (i: number) => join(nodeDir(i), 'my.cnf');
    for (let i = 0; i < 3; i += 1) {
      mkdirSync(join(nodeDir(i), 'data'), { recursive: true });
      mkdirSync(join(nodeDir(i), 'tmp'), { recursive: true });
      const peers = [0, 1, 2].filter((j) => j !== i).map((j) => `127.0.0.1:${ports[j]!.gcomm}`);
      const p = ports[i]!;
      writeFileSync(configFile(i), [
        '[mysqld]',
        `datadir=${join(nodeDir(i), 'data')}`, `tmpdir=${join(nodeDir(i), 'tmp')}`,
        `socket=${join(nodeDir(i), 'mysqld.sock')}`, `pid-file=${join(nodeDir(i), 'mysqld.pid')}`,
                // As the mysql user, as Debian runs it: the state transfer's rsync daemon, started as root,
        // would drop to nobody and could not write the joiner's data directory.
        `port=${p.client}`, 'bind-address=127.0.0.1', 'user=mysql', 'skip-name-resolve',
        'innodb-buffer-pool-size=32M', 'innodb-log-file-size=16M', 'max-connections=300',
        'binlog-format=ROW', 'default-storage-engine=InnoDB', 'innodb-autoinc-lock-mode=2',
        'wsrep-on=ON', `wsrep-provider=${GALERA_PROVIDER}`, 'wsrep-cluster-name=vanish_test',
        `wsrep-cluster-address=gcomm://${peers.join(',')}`, `wsrep-node-name=node${i + 1}`,
        `wsrep-node-address=127.0.0.1:${p.gcomm}`, `wsrep-node-incoming-address=127.0.0.1:${p.client}`,
        `wsrep-sst-receive-address=127.0.0.1:${p.sst}`, `wsrep-sst-method=${SST_METHOD}`, 'wsrep-sst-auth=root:',
        `wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:${p.gcomm};ist.recv_addr=127.0.0.1:${p.ist};gcache.size=64M;${EVS_OPTIONS.join(';')}"`,
        '',
        '[sst]', 'progress=none', '',
      ].join('\n'));
    }
    // Only the first node needs system tables of its own: the others receive them by state transfer.
    await run('chown', ['-R', 'mysql:mysql', dir]);
    await run('/usr/bin/mariadb-install-db', [`--defaults-file=${configFile(0)}`, '--auth-root-authentication-method=normal', '--skip-test-db', '--user=mysql'], { timeout: 120_000 });

    const connect = (port: number) => mysql.createConnection({ host: '127.0.0.1', port, user: 'root', password: '', connectTimeout: 2000 });
    const nodes = ports.map((p, i): GaleraNode => {
      const node: GaleraNode = {
        name: `node${i + 1}`,
        port: p.client,
        isRunning: () => daemons[i]?.isRunning() ?? false,
        async query<T>(sql: string, params: unknown[] = []) {
          const connection = await connect(p.client);
          try {
            const [rows] = await connection.query(sql, params);
            return rows as T;
          } finally {
            await connection.end();
          }
        },
        async status() {
          try {
            const rows = await node.query<Array<{ VARIABLE_NAME: string; VARIABLE_VALUE: string }>>(
              "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN ('WSREP_LOCAL_STATE_COMMENT','WSREP_CLUSTER_STATUS','WSREP_CLUSTER_SIZE','WSREP_READY')",
            );
            const s = Object.fromEntries(rows.map((row) => [row.VARIABLE_NAME, row.VARIABLE_VALUE]));
            return { state: s.WSREP_LOCAL_STATE_COMMENT ?? '', cluster: s.WSREP_CLUSTER_STATUS ?? '', size: Number(s.WSREP_CLUSTER_SIZE ?? 0), ready: s.WSREP_READY ?? '' };
          } catch {
            return null;
          }
        },
        async kill() {
          await daemons[i]?.kill('SIGKILL');
        },
        async start() {
          await startNode(i, false, true);
        },
      };
      return node;
    }) as unknown as [GaleraNode, GaleraNode, GaleraNode];

    const startNode = async (i: number, bootstrap: boolean, afterCrash = false): Promise<void> => {
      // After a crash grastate.dat says seqno -1: what galera_recovery does under systemd, ask InnoDB for
      // the last committed position first, so the node rejoins by IST (the writesets it missed, from the
      // gcache) instead of a full state transfer that would pause its donor.
      const position = afterCrash ? await recoveredPosition(configFile(i)) : undefined;
      const daemon = startDaemon(`galera-node${i + 1}`, '/usr/sbin/mariadbd', [
        `--defaults-file=${configFile(i)}`, ...(bootstrap ? ['--wsrep-new-cluster'] : []),
        ...(position ? [`--wsrep-start-position=${position}`] : []),
      ]);
      daemons[i] = daemon;
      await waitFor(async () => {
        if (!daemon.isRunning()) throw new Error(`node${i + 1} exited (GALERA_KEEP=1 keeps ${dir}): ${daemon.output().slice(-3000)}`);
        const status = await nodes[i]!.status();
        return status !== null && status.state === 'Synced' && status.cluster === 'Primary' && status.ready === 'ON';
      }, { timeoutMs: 180_000, intervalMs: 250, description: `galera node${i + 1} Synced` });
    };
    // One after another: each joiner takes a full state transfer (mariabackup) from a Synced node.
    await startNode(0, true);
    await startNode(1, false);
    await startNode(2, false);
    // The donors too: a donor goes back to Synced only after the joiner caught up.
    let last = '';
    await waitFor(async () => {
      const states = await Promise.all(nodes.map((node) => node.status()));
      last = JSON.stringify(states);
      return states.every((state) => state?.state === 'Synced' && state.ready === 'ON' && state.size === 3);
    }, { timeoutMs: 120_000, intervalMs: 250, description: 'all three nodes Synced' }).catch((err: Error) => {
      throw new Error(`${err.message}: ${last}`);
    });

    const checkFile = join(dir, 'galera-check.sh');
    writeFileSync(checkFile, CHECK_SCRIPT);
    chmodSync(checkFile, 0o755);
    const writerPort = await freePort();
    const statsSocket = join(dir, 'haproxy.sock');
    const haproxyConfig = join(dir, 'haproxy.cfg');
    writeFileSync(haproxyConfig, haproxyConfiguration({ writerPort, statsSocket, checkFile, check, nodes: ports.map((p, i) => ({ name: `node${i + 1}`, port: p.client })) }));
    await run('/usr/sbin/haproxy', ['-c', '-q', '-f', haproxyConfig]);
    haproxy = startDaemon('haproxy-galera', '/usr/sbin/haproxy', ['-db', '-f', haproxyConfig]);

    const servers = async (): Promise<HaproxyServerState[]> => {
      const csv = await haproxyCommand(statsSocket, 'show stat');
      const lines = csv.split('\n').filter((line) => line.startsWith('writer,node'));
      const header = csv.split('\n')[0]!.replace(/^# /, '').split(',');
      const at = (name: string) => header.indexOf(name);
      return lines.map((line) => {
        const f = line.split(',');
        return { name: f[at('svname')]!, status: f[at('status')]!, backup: f[at('bck')] === '1', sessions: Number(f[at('scur')]) };
      });
    };
    await waitFor(async () => (await servers()).every((s) => s.status === 'UP'), { timeoutMs: 60_000, intervalMs: 200, description: 'HAProxy sees the three nodes up' })
      .catch(async (err: Error) => {
        const checked = await run(checkFile, ['127.0.0.1', String(writerPort), '127.0.0.1', String(ports[0]!.client)]).then(() => 'passes', (failure: Error) => `fails: ${failure.message}`);
        throw new Error(`${err.message}: ${JSON.stringify(await servers())}; the check on node1 by hand ${checked}; nodes ${JSON.stringify(await Promise.all(nodes.map((node) => node.status())))}; haproxy said: ${haproxy?.output().slice(-2000)}`);
      });

    return {
      nodes,
      writerPort,
      servers,
      async writer() {
        // Where the stick table sends connections now (server ids are 1, 2, 3 in the order of the lines).
        const table = await haproxyCommand(statsSocket, 'show table writer');
        const stuck = /server_id=(\d+)/.exec(table)?.[1];
        const state = await servers();
        if (stuck) {
          const node = nodes[Number(stuck) - 1];
          if (node && state.find((s) => s.name === node.name)?.status === 'UP') return node;
        }
        const up = state.filter((s) => s.status === 'UP');
        const first = up[0];
        return first ? nodes.find((node) => node.name === first.name) : undefined;
      },
      async createDatabase(prefix) {
        const name = `${prefix}_${randomBytes(4).toString('hex')}`;
        const connection = await connect(writerPort);
        try {
          await connection.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
        } finally {
          await connection.end();
        }
        return { name, url: `mysql://root@127.0.0.1:${writerPort}/${name}`, drop: async () => undefined }; // the whole cluster goes in stop()
      },
      async partition(index) {
        await nodes[index]!.query("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'");
      },
      async heal(index) {
        await nodes[index]!.query("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'");
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** `mariadbd --wsrep-recover`: the node's last committed uuid:seqno, from InnoDB. */
async function recoveredPosition(configFile: string): Promise<string | undefined> {
  const { stdout, stderr } = await run('/usr/sbin/mariadbd', [`--defaults-file=${configFile}`, '--wsrep-recover'], { timeout: 120_000 })
    .catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));
  return /WSREP: Recovered position:\s*(\S+:-?\d+)/.exec(`${stdout}\n${stderr}`)?.[1];
}

interface HaproxyConfigInput {
  writerPort: number;
  statsSocket: string;
  checkFile: string;
  check: { interMs: number; fall: number; rise: number };
  nodes: Array<{ name: string; port: number }>;
}

/**
 * The single-writer pattern: a one-entry stick table sends every connection to one node (the first
 * UP one, `balance first`, when the table is empty or its node is down), and the entry is rewritten
 * with the node a connection went to instead, so that the address stays there when the old node
 * returns (no failback, never two nodes written at once). The table must be allowed to purge:
 * with `nopurge` and `size 1` HAProxy (2.6) finds it full, cannot make the new entry, and keeps the
 * old node's, which sent new connections back to the restarted node while pooled ones stayed on
 * the one they had failed over to (measured: two nodes written at once).
 * on-marked-down shutdown-sessions ends the sessions of a node the check marks down: a client must
 * not wait on a dead writer.
 */
export function haproxyConfiguration({ writerPort, statsSocket, checkFile, check, nodes }: HaproxyConfigInput): string {
  return [
    'global',
    '  maxconn 2000',
    `  stats socket ${statsSocket} mode 600 level admin`,
    '  external-check',
    '  insecure-fork-wanted',
    'defaults',
    '  mode tcp',
    '  timeout connect 1s',
    '  timeout client 1h',
    '  timeout server 1h',
    '  timeout check 3s',
    'listen writer',
    `  bind 127.0.0.1:${writerPort}`,
    '  balance first',
    '  option external-check',
    '  external-check path "/usr/bin:/bin"',
    `  external-check command ${checkFile}`,
    '  stick-table type integer size 1',
    '  stick on int(1)',
    // A connection refused by a dead writer is tried once more, on the next node, before the checks
    // mark it down. (With observe layer4 and on-error mark-down as well, one run had no node UP after
    // the killed writer's restart: live nodes marked down too, it seems, on sessions ended by the
    // services' KILLs or by HAProxy itself. Left out.)
    '  retries 1',
    '  option redispatch 1',
    `  default-server inter ${check.interMs}ms fastinter ${Math.min(check.interMs, 1000)}ms fall ${check.fall} rise ${check.rise} on-marked-down shutdown-sessions`,
    ...nodes.map((node) => `  server ${node.name} 127.0.0.1:${node.port} check`),
    '',
  ].join('\n');
}

function haproxyCommand(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = connectSocket(socket);
    let out = '';
    client.on('connect', () => client.end(`${command}\n`));
    client.on('data', (chunk) => { out += chunk.toString('utf8'); });
    client.on('end', () => resolve(out));
    client.on('error', reject);
  });
}

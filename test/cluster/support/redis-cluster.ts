import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { freePort, waitFor } from '@vanish/testkit/net';
import { requireBinary, type Daemon } from './daemons';
import { askRedis, startRedisServer } from './redis-server';

const run = promisify(execFile);

/** Node timeout of the test's cluster: a master unreachable this long is failed over to its replica. */
export const CLUSTER_NODE_TIMEOUT_MS = 2000;

/** Three masters and three replicas (Debian's redis-server 7.0, cluster-enabled) on loopback ports. */
export interface RedisClusterUnderTest {
  /** `127.0.0.1:port,...` for REDIS_CLUSTER_NODES. */
  nodeList: string;
  /** The same nodes, as ioredis takes them. */
  nodes: Array<{ host: string; port: number }>;
  /** Port of the master that serves a key's slot now, as the surviving nodes say. */
  masterPortOf(key: string): Promise<number>;
  /** SIGKILL one node. */
  kill(port: number): Promise<void>;
  /** Starts a killed node again (its nodes.conf brings it back as a replica) and waits for a healthy cluster. */
  restart(port: number): Promise<void>;
  /** A Cluster client (masters only) seeded with every running node; the caller disconnects it. */
  client(): Cluster;
  stop(): Promise<void>;
}

/** Distinct free ports: each node needs a client port and a cluster bus port. */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

export async function startRedisCluster(): Promise<RedisClusterUnderTest> {
  requireBinary('/usr/bin/redis-cli', 'apt-get install -y redis-tools');
  const dir = mkdtempSync(join(tmpdir(), 'vanish-redis-cluster-'));
  const ports = await distinctFreePorts(12);
  const clientPorts = ports.slice(0, 6);
  const busPort = new Map(clientPorts.map((port, i) => [port, ports[6 + i]!]));
  const nodes = new Map<number, Daemon>();
  const startNode = async (port: number): Promise<void> => {
    nodes.set(port, await startRedisServer(dir, port, [
      '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-port', String(busPort.get(port)),
      '--cluster-node-timeout', String(CLUSTER_NODE_TIMEOUT_MS),
      // A replica takes over however long it was cut off (the test kills masters on purpose).
      '--cluster-replica-validity-factor', '0',
    ]));
  };
  const running = () => clientPorts.filter((port) => nodes.get(port)?.isRunning());
  const healthy = () => waitFor(async () => {
    for (const port of running()) {
      const info = await askRedis(port, (redis) => redis.call('CLUSTER', 'INFO') as Promise<string>);
      if (!/cluster_state:ok/.test(info) || !/cluster_slots_ok:16384/.test(info) || !/cluster_known_nodes:6/.test(info)) return false;
    }
    return true;
  }, { timeoutMs: 60_000, intervalMs: 200, description: 'every running node sees all 16384 slots served and six nodes' });
  const cluster: RedisClusterUnderTest = {
    nodeList: clientPorts.map((port) => `127.0.0.1:${port}`).join(','),
    nodes: clientPorts.map((port) => ({ host: '127.0.0.1', port })),
    async masterPortOf(key) {
      const asked = running()[0]!;
      return askRedis(asked, async (redis) => {
        const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', key));
        const ranges = (await redis.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number, ...unknown[]], ...unknown[]]>;
        const range = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (!range) throw new Error(`no node serves slot ${slot}`);
        return Number(range[2][1]);
      });
    },
    async kill(port) {
      await nodes.get(port)?.kill('SIGKILL');
    },
    async restart(port) {
      await startNode(port);
      await healthy();
    },
    client() {
      // Every node as a seed: the killed one may be any of them.
      const client = new Cluster(running().map((port) => ({ host: '127.0.0.1', port })), { scaleReads: 'master' });
      client.on('error', () => undefined); // a seed that died meanwhile; the others answer
      return client;
    },
    async stop() {
      await Promise.all([...nodes.values()].map((daemon) => daemon.kill('SIGKILL')));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    for (const port of clientPorts) await startNode(port);
    await run('/usr/bin/redis-cli', ['--cluster', 'create', ...clientPorts.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1', '--cluster-yes'], { timeout: 60_000 });
    await healthy();
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, waitFor } from '@vanish/testkit/net';
import { requireBinary, startDaemon, type Daemon } from './daemons';
import { startRedisServer } from './redis-server';

export const SENTINEL_NAME = 'vanish-limits';

/** A Redis primary, a replica and three Sentinels (quorum 2, down-after 2000 ms) on loopback ports. */
export interface SentinelCluster {
  sentinelList: string;
  /** Port of the current primary, as the Sentinels say. */
  primaryPort(): Promise<number>;
  /** SIGKILL the current primary; returns its port. */
  killPrimary(): Promise<number>;
  /** Starts the killed node again as a replica of the current primary (never as an empty primary). */
  restartAsReplica(port: number): Promise<void>;
  /** A client of the current primary (through the Sentinels); the caller quits it. */
  client(): Redis;
  stop(): Promise<void>;
}

export async function startSentinelCluster(): Promise<SentinelCluster> {
  requireBinary('/usr/bin/redis-sentinel', 'apt-get install -y redis-sentinel');
  const dir = mkdtempSync(join(tmpdir(), 'vanish-sentinel-'));
  const nodes = new Map<number, Daemon>();
  const sentinels: Daemon[] = [];
  const startNode = async (port: number, replicaOf?: number): Promise<void> => {
    nodes.set(port, await startRedisServer(dir, port, replicaOf ? ['--replicaof', '127.0.0.1', String(replicaOf)] : [],
      async (probe) => (replicaOf ? /master_link_status:up/.test(await probe.info('replication')) : true)));
  };
  const [primary, replica] = [await freePort(), await freePort()];
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const cluster: SentinelCluster = {
    sentinelList: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','),
    async primaryPort() {
      const probe = new Redis({ port: sentinelPorts[0]!, host: '127.0.0.1', retryStrategy: () => null });
      try {
        const [, port] = (await probe.call('SENTINEL', 'get-master-addr-by-name', SENTINEL_NAME)) as [string, string];
        return Number(port);
      } finally {
        probe.disconnect();
      }
    },
    async killPrimary() {
      const port = await cluster.primaryPort();
      await nodes.get(port)!.kill('SIGKILL');
      return port;
    },
    async restartAsReplica(port: number) {
      await startNode(port, await cluster.primaryPort());
    },
    client: () => new Redis({ sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })), name: SENTINEL_NAME }),
    async stop() {
      await Promise.all([...sentinels, ...nodes.values()].map((d) => d.kill('SIGKILL')));
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    await startNode(primary);
    await startNode(replica, primary);
    for (const port of sentinelPorts) {
      const file = join(dir, `sentinel-${port}.conf`);
      writeFileSync(file, [
        `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
        `sentinel monitor ${SENTINEL_NAME} 127.0.0.1 ${primary} 2`,
        `sentinel down-after-milliseconds ${SENTINEL_NAME} 2000`,
        `sentinel failover-timeout ${SENTINEL_NAME} 10000`,
        `sentinel parallel-syncs ${SENTINEL_NAME} 1`, '',
      ].join('\n'));
      sentinels.push(startDaemon(`sentinel-${port}`, '/usr/bin/redis-sentinel', [file]));
    }
    // Each Sentinel has found the replica and the other Sentinels.
    await waitFor(async () => {
      for (const port of sentinelPorts) {
        const probe = new Redis({ port, host: '127.0.0.1', retryStrategy: () => null, lazyConnect: true });
        try {
          await probe.connect();
          const master = (await probe.call('SENTINEL', 'master', SENTINEL_NAME)) as string[];
          const field = (name: string) => Number(master[master.indexOf(name) + 1]);
          if (field('num-slaves') < 1 || field('num-other-sentinels') < 2) return false;
        } finally {
          probe.disconnect();
        }
      }
      return true;
    }, { timeoutMs: 60_000, intervalMs: 250, description: 'three Sentinels that know the replica and each other' });
  } catch (err) {
    await cluster.stop();
    throw err;
  }
  return cluster;
}

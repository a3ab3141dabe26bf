import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { canConnect, freePort, waitFor } from '@vanish/testkit/net';
import { requireBinary, startDaemon, type Daemon } from './daemons';

const run = promisify(execFile);
const BIN = '/usr/lib/rabbitmq/bin';

export interface RabbitNode {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  isRunning(): boolean;
}

/**
 * A RabbitMQ cluster of Debian's rabbitmq-server on loopback ports of its own: the scripts in
 * /usr/lib/rabbitmq/bin called directly (the /usr/sbin wrappers switch to the rabbitmq user and read
 * /etc/rabbitmq), a private epmd, one Erlang cookie in a HOME of its own, explicit distribution ports.
 * Nodes 2.. join node 1 on first boot (classic_config peer discovery).
 */
export interface RabbitCluster {
  readonly nodes: readonly RabbitNode[];
  /** Every node's URL, comma-separated: what AMQP_URL gets. */
  readonly urlList: string;
  /** rabbitmqctl (or another CLI script) against a running node. */
  ctl(args: readonly string[], tool?: string): Promise<string>;
  /** The index of the node that leads a quorum queue. */
  leaderOf(queue: string): Promise<number>;
  /** Message counts of queues whose name starts with prefix (asked of any running node). */
  queueDepths(prefix: string): Promise<Record<string, number>>;
  kill(index: number): Promise<void>;
  /** Starts a stopped node again; resolves once it is back in the cluster. */
  restart(index: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRabbitCluster(size = 3): Promise<RabbitCluster> {
  requireBinary(`${BIN}/rabbitmq-server`, 'apt-get install -y rabbitmq-server');
  const dir = mkdtempSync(join(tmpdir(), 'vanish-rabbit-'));
  const home = join(dir, 'home');
  mkdirSync(home);
  writeFileSync(join(home, '.erlang.cookie'), randomBytes(20).toString('hex').toUpperCase(), { mode: 0o400 });
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
  const epmdPort = await freePort();
  const ctlPort = await freePort();
  const tag = randomBytes(3).toString('hex');
  const specs: Array<{ name: string; port: number; distPort: number }> = [];
  for (let i = 1; i <= size; i += 1) specs.push({ name: `vq${i}-${tag}@localhost`, port: await freePort(), distPort: await freePort() });
  const baseEnv = {
    HOME: home,
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_CTL_DIST_PORT_MIN: String(ctlPort),
    RABBITMQ_CTL_DIST_PORT_MAX: String(ctlPort),
    ERL_FLAGS: '-kernel inet_dist_use_interface {127,0,0,1}',
  };
  const daemons: Array<Daemon | undefined> = [];
  // A private epmd of the test's own, in the foreground, so that stop() ends it (a node would start a
  // daemonized one that outlives the test).
  const epmd = startDaemon('epmd', '/usr/bin/epmd', ['-port', String(epmdPort), '-address', '127.0.0.1']);
  await waitFor(() => canConnect('127.0.0.1', epmdPort), { timeoutMs: 10_000, description: 'the private epmd' });
  const nodeDir = (i: number) => join(dir, `node${i + 1}`);
  for (const [i, spec] of specs.entries()) {
    mkdirSync(nodeDir(i), { recursive: true });
    writeFileSync(join(nodeDir(i), 'rabbitmq.conf'), [
      `listeners.tcp.1 = 127.0.0.1:${spec.port}`,
      'cluster_formation.peer_discovery_backend = classic_config',
      ...specs.map((s, j) => `cluster_formation.classic_config.nodes.${j + 1} = ${s.name}`),
      'log.console = true', 'log.console.level = warning', 'log.file = false',
      // Quorum queues re-elect on a lost node after this many ms of silence.
      'net_ticktime = 10', '',
    ].join('\n'));
  }
  const start = (i: number): Daemon => {
    const spec = specs[i]!;
    const daemon = startDaemon(spec.name, `${BIN}/rabbitmq-server`, [], {
      ...baseEnv,
      RABBITMQ_NODENAME: spec.name,
      RABBITMQ_NODE_PORT: String(spec.port),
      RABBITMQ_DIST_PORT: String(spec.distPort),
      RABBITMQ_CONFIG_FILE: join(nodeDir(i), 'rabbitmq.conf'),
      RABBITMQ_MNESIA_BASE: join(nodeDir(i), 'mnesia'),
      RABBITMQ_LOG_BASE: join(nodeDir(i), 'log'),
    });
    daemons[i] = daemon;
    return daemon;
  };
  const running = (i: number) => daemons[i]?.isRunning() ?? false;
  const ctl = async (args: readonly string[], tool = 'rabbitmqctl', nodeIndex?: number): Promise<string> => {
    const index = nodeIndex ?? specs.findIndex((_s, i) => running(i));
    const { stdout } = await run(`${BIN}/${tool}`, ['-n', specs[index]!.name, ...args], { env: { ...process.env, ...baseEnv }, timeout: 60_000 });
    return stdout;
  };
  const runningNodes = async (): Promise<string[]> => {
    const status = JSON.parse(await ctl(['cluster_status', '--formatter', 'json'])) as { running_nodes: string[] };
    return status.running_nodes;
  };
  const waitUp = async (i: number, clustered: number) => {
    await waitFor(() => canConnect('127.0.0.1', specs[i]!.port), { timeoutMs: 120_000, intervalMs: 250, description: `${specs[i]!.name} listening` });
    await waitFor(async () => (await runningNodes()).length >= clustered, { timeoutMs: 120_000, intervalMs: 500, description: `${clustered} nodes running` });
  };

  const cluster: RabbitCluster = {
    nodes: specs.map((spec, i) => ({ name: spec.name, port: spec.port, url: `amqp://guest:guest@127.0.0.1:${spec.port}`, isRunning: () => running(i) })),
    urlList: specs.map((spec) => `amqp://guest:guest@127.0.0.1:${spec.port}`).join(','),
    ctl: (args, tool) => ctl(args, tool),
    async leaderOf(queue) {
      const rows = JSON.parse(await ctl(['list_queues', 'name', 'leader', '--formatter', 'json'])) as Array<{ name: string; leader: string }>;
      const leader = rows.find((row) => row.name === queue)?.leader;
      const index = specs.findIndex((s) => s.name === leader);
      if (index < 0) throw new Error(`no leader known for ${queue}`);
      return index;
    },
    async queueDepths(prefix) {
      const rows = JSON.parse(await ctl(['list_queues', 'name', 'messages', '--formatter', 'json'])) as Array<{ name: string; messages: number }>;
      return Object.fromEntries(rows.filter((row) => row.name.startsWith(prefix)).map((row) => [row.name, Number(row.messages)]));
    },
    async kill(index) {
      await daemons[index]?.kill('SIGKILL');
    },
    async restart(index) {
      start(index);
      await waitUp(index, size);
    },
    async stop() {
      await Promise.all(daemons.map((d) => d?.kill('SIGKILL')));
      await epmd.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
  try {
    start(0);
    await waitUp(0, 1);
    for (let i = 1; i < size; i += 1) start(i);
    for (let i = 1; i < size; i += 1) await waitUp(i, size);
  } catch (err) {
    const output = daemons.map((d) => `${d?.name}: ${d?.output().slice(-2000)}`).join('\n');
    await cluster.stop();
    throw new Error(`${(err as Error).message}\n${output}`);
  }
  return cluster;
}

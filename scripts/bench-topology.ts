// The full topology for the benchmarks: gateway, notes, stats and mailer as separate processes on the
// machine's MariaDB (a database per service, created for the run and dropped after), Redis (a key prefix
// per run) and RabbitMQ (a vhost per run, deleted after), limits raised.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { KeyRing, publicRingOf } from '@vanish/common';
import { ROOT, freePort, randomKey, randomSuffix, startNode, waitReady, type Child, type LoadOptions } from './bench-lib';

export const HIGH_LIMIT = '1000000';
/** The NODE_OPTIONS of the service images (checked against the Dockerfiles by test/deploy/compose.int.test.ts). */
export const SERVICE_NODE_OPTIONS = '--max-semi-space-size=8';
/**
 * The V8 flag the images pass on node's command line (NODE_OPTIONS refuses it; checked against the Dockerfiles
 * by test/deploy/compose.int.test.ts): the old space grows by half of what a major collection kept, not by up to 4x.
 */
export const SERVICE_NODE_FLAG = '--heap-growing-percent=50';

/** The node flags the services start with: the images' flag, or BENCH_NODE_ARGS for an A/B run ('' for V8's defaults). */
export function serviceNodeFlags(): string[] {
  return (process.env.BENCH_NODE_ARGS ?? SERVICE_NODE_FLAG).split(' ').filter(Boolean);
}

/** The NODE_OPTIONS the services start with: the images', and BENCH_NODE_OPTIONS added for an A/B run. */
export function serviceNodeOptions(): string {
  return [SERVICE_NODE_OPTIONS, process.env.BENCH_NODE_OPTIONS ?? ''].join(' ').trim();
}
export const MARIADB_URL = (process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306').replace(/\/+$/, '');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const AMQP_BASE = (process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672').replace(/\/+$/, '');

type ServiceName = 'gateway' | 'notes' | 'stats' | 'mailer';

export interface Topology {
  baseUrl: string;
  ports: Record<ServiceName, [number, number]>;
  services: Record<ServiceName, Child>;
  databases: Record<Exclude<ServiceName, 'gateway'>, string>;
}

export function rabbitmqctl(...args: string[]): void {
  const run = spawnSync('rabbitmqctl', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`rabbitmqctl ${args.join(' ')} failed: ${run.stderr || run.stdout}`);
}

/**
 * Starts the four services and waits for each /readyz. Started children and cleanups are appended to the
 * caller's lists, so that the caller stops and cleans up even when a later step fails.
 * BENCH_CPU_PROF=1 starts them with `node --cpu-prof` (profiles in the log directory, written at exit).
 */
export async function startTopology(options: {
  logDir: string;
  dataDir: string;
  logLevel: string;
  children: Child[];
  cleanups: (() => Promise<void>)[];
}): Promise<Topology> {
  const { logDir, dataDir, logLevel, children, cleanups } = options;
  const suffix = randomSuffix();
  const databases = { notes: `vanish_bench_notes_${suffix}`, stats: `vanish_bench_stats_${suffix}`, mailer: `vanish_bench_mailer_${suffix}` };
  const admin = await mysql.createConnection(MARIADB_URL);
  cleanups.push(async () => {
    for (const name of Object.values(databases)) await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await admin.end();
  });
  for (const name of Object.values(databases)) await admin.query(`CREATE DATABASE \`${name}\``);
  const vhost = `vanish-bench-${suffix}`;
  rabbitmqctl('add_vhost', vhost);
  cleanups.push(async () => rabbitmqctl('delete_vhost', vhost));
  rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
  const amqpUrl = `${AMQP_BASE}/${encodeURIComponent(vhost)}`;

  const ports: Topology['ports'] = {
    gateway: [await freePort(), await freePort()], notes: [await freePort(), await freePort()],
    stats: [await freePort(), await freePort()], mailer: [await freePort(), await freePort()],
  };
  const baseUrl = `http://127.0.0.1:${ports.gateway[0]}`;
  const mailPrivateKeys = KeyRing.parse(`m1:${randomKey()}`);
  // NODE_OPTIONS as the images set it (the Dockerfile's service stage), so the processes run as in a container.
  const common = {
    DATA_DIR: dataDir, LOG_LEVEL: logLevel, AMQP_URL: amqpUrl, PUBLIC_BASE_URL: baseUrl, HEARTBEAT_INTERVAL_MS: '2000',
    NODE_OPTIONS: serviceNodeOptions(),
  };
  const dbUrl = (name: string): string => `${MARIADB_URL}/${name}`;
  const profile = process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${logDir}`] : [];
  const main = (name: ServiceName): string[] => [...profile, ...serviceNodeFlags(), join(ROOT, `services/${name}/dist/main.js`)];
  const listen = (name: ServiceName) => ({ PORT: String(ports[name][0]), ADMIN_PORT: String(ports[name][1]) });

  const notes = startNode('notes', main('notes'), {
    ...common, ...listen('notes'), DATABASE_URL: dbUrl(databases.notes),
    MASTER_KEYS: `k1:${randomKey()}`, LOOKUP_KEY: randomKey(), MAIL_PUBLIC_KEYS: publicRingOf(mailPrivateKeys).serialize(),
  }, logDir);
  children.push(notes);
  const stats = startNode('stats', main('stats'), { ...common, ...listen('stats'), DATABASE_URL: dbUrl(databases.stats) }, logDir);
  children.push(stats);
  const mailer = startNode('mailer', main('mailer'), {
    ...common, ...listen('mailer'), DATABASE_URL: dbUrl(databases.mailer), MAIL_PRIVATE_KEYS: mailPrivateKeys.serialize(),
  }, logDir);
  children.push(mailer);
  const gateway = startNode('gateway', main('gateway'), {
    ...common, ...listen('gateway'), LIMITER_KEY: randomKey(),
    NOTES_URL: `http://127.0.0.1:${ports.notes[0]}`, STATS_URL: `http://127.0.0.1:${ports.stats[0]}`,
    MAILER_URL: `http://127.0.0.1:${ports.mailer[0]}`,
    REDIS_URL, RATE_LIMIT_KEY_PREFIX: `vanish-bench-${suffix}`,
    RATE_LIMIT_CREATE_PER_HOUR: HIGH_LIMIT, RATE_LIMIT_VIEW_PER_HOUR: HIGH_LIMIT, RATE_LIMIT_STATS_PER_HOUR: HIGH_LIMIT,
  }, logDir);
  children.push(gateway);
  const services = { gateway, notes, stats, mailer };
  for (const name of ['notes', 'stats', 'mailer', 'gateway'] as const) {
    await waitReady(services[name], `http://127.0.0.1:${ports[name][1]}/readyz`);
  }
  return { baseUrl, ports, services, databases };
}

/** Creates `count` 24-hour time notes through the gateway (reads never end them) and returns their uuids. */
export async function seedNotes(baseUrl: string, count: number): Promise<string[]> {
  const uuids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const res = await fetch(`${baseUrl}/api/create.php`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ content: `bench seed ${i}`, expiry_type: 'time', expiry_time: 24 }),
    });
    if (res.status !== 200) throw new Error(`seeding a note answered ${res.status}: ${await res.text()}`);
    uuids.push(((await res.json()) as { uuid: string }).uuid);
  }
  return uuids;
}

export type ScenarioName = 'read' | 'create' | 'stats';

/**
 * The requests of the three measured scenarios through the gateway, so that `npm run bench` and
 * `npm run bench:scenario` measure the same thing. Reads rotate over the given notes; creates are
 * view-once notes without a passcode (a passcode adds scrypt: about half a second of CPU by design).
 */
export function scenarioRequest(name: ScenarioName, baseUrl: string, uuids: readonly string[] = []): Omit<LoadOptions, 'connections' | 'durationSeconds'> {
  switch (name) {
    case 'read':
      return { scenario: 'metadata read (gateway → notes → MariaDB)', url: baseUrl, paths: uuids.map((u) => `/api/view/${u}.php`) };
    case 'create':
      return {
        scenario: 'create (gateway → notes: seal + insert + outbox)', url: `${baseUrl}/api/create.php`, method: 'POST',
        body: JSON.stringify({ content: 'a benchmark note, sealed and stored like any other', expiry_type: 'view', max_views: 1 }),
        headers: { 'Content-Type': 'application/json' },
      };
    case 'stats':
      return { scenario: 'stats (gateway → stats)', url: `${baseUrl}/api/stats.php` };
  }
}

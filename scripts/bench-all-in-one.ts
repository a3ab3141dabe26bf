// The all-in-one as `npm start` runs it (`node <flags> services/all-in-one/dist/main.js`, the flags read from package.json; SQLite files in
// DATA_DIR, the in-process bus, in-memory limits, mail to files), for `npm run bench` (its rows beside the
// separate services) and, run on its own, for A/B runs of all-in-one changes:
//
//   node scripts/dist/bench-all-in-one.js [rounds]
//
// prints, per round, creates and metadata reads at 50, 10 and 1 connections: requests/s, p50/p99, CPU µs per
// request of the one process (the only process on the path: no database server, no broker, no Redis) and RSS
// after the round. BENCH_AIO_MAIN=<path> measures another build's main.js (the A of an A/B: a worktree of the
// commit before), BENCH_AIO_NODE_ARGS='<flags>' starts it with other node flags than `npm start`'s (an A/B of
// the flags; '' for none), BENCH_DURATION (10), BENCH_WARMUP (3), BENCH_AIO_CONNECTIONS (50,10,1).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ROOT, cleanUpOnSignal, cpuSeconds, fmt, freePort, loadAverage, log, rssMb, runAutocannon, runIfMain, startNode, waitReady, type Child, type LoadOptions, type LoadResult,
} from './bench-lib';
import { npmStartNodeFlags } from '@vanish/testkit';
import { HIGH_LIMIT, scenarioRequest, seedNotes, type ScenarioName } from './bench-topology';

export interface AllInOne {
  child: Child;
  baseUrl: string;
  adminPort: number;
  dataDir: string;
}

/**
 * Starts the all-in-one the way `npm start` does (`node <its flags> main.js`), in a fresh DATA_DIR, every
 * port free (the public and admin ports chosen here, the rest ephemeral), limits raised, LOG_LEVEL as given;
 * `env` is added to its environment (an A/B of an environment variable such as MALLOC_ARENA_MAX).
 */
export async function startAllInOne(options: { logDir: string; logLevel: string; main?: string; name?: string; nodeFlags?: string[]; env?: Record<string, string> }): Promise<AllInOne> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vanish-bench-aio-'));
  const port = await freePort();
  const adminPort = await freePort();
  const main = options.main ?? join(ROOT, 'services/all-in-one/dist/main.js');
  const flags = options.nodeFlags ?? process.env.BENCH_AIO_NODE_ARGS?.split(' ').filter(Boolean) ?? npmStartNodeFlags(ROOT);
  const child = startNode(options.name ?? 'all-in-one', [...flags, main], {
    DATA_DIR: dataDir, LOG_LEVEL: options.logLevel, LOG_FORMAT: 'json',
    PORT: String(port), ADMIN_PORT: String(adminPort),
    NOTES_PORT: '0', NOTES_ADMIN_PORT: '0', STATS_PORT: '0', STATS_ADMIN_PORT: '0', MAILER_PORT: '0', MAILER_ADMIN_PORT: '0', WEBHOOKS_ADMIN_PORT: '0',
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    RATE_LIMIT_CREATE_PER_HOUR: HIGH_LIMIT, RATE_LIMIT_VIEW_PER_HOUR: HIGH_LIMIT, RATE_LIMIT_STATS_PER_HOUR: HIGH_LIMIT,
    ...options.env,
  }, options.logDir);
  const stop = child.stop.bind(child);
  child.stop = async () => {
    await stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  await waitReady(child, `http://127.0.0.1:${adminPort}/readyz`);
  return { child, baseUrl: `http://127.0.0.1:${port}`, adminPort, dataDir };
}

export interface AioMeasurement extends LoadResult {
  connections: number;
  /** CPU µs per request of the all-in-one process. */
  cpuUsPerRequest: number;
  /** The same less what the process spends idle over as long (its timers: outbox relay, heartbeats, pruners). */
  busyCpuUsPerRequest: number;
  rssMb?: number;
}

/** One autocannon run against the all-in-one with the CPU of its process per answered request. */
export async function measureAllInOne(aio: AllInOne, options: LoadOptions, warmupSeconds: number): Promise<AioMeasurement> {
  if (warmupSeconds > 0) await runAutocannon({ ...options, durationSeconds: warmupSeconds });
  const pid = aio.child.process.pid;
  // What the process spends with no requests, per second: subtracted, so that a slower (busier) machine,
  // which answers fewer requests in the same time, does not add more idle work to each request.
  const idleStart = cpuSeconds([pid]);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idlePerSecond = (cpuSeconds([pid]) - idleStart) / 2;
  const before = cpuSeconds([pid]);
  const started = Date.now();
  const result = await runAutocannon(options);
  const cpu = cpuSeconds([pid]) - before;
  const seconds = (Date.now() - started) / 1000;
  const requests = Math.max(1, result.total);
  const cpuUsPerRequest = (cpu * 1e6) / requests;
  const busyCpuUsPerRequest = (Math.max(0, cpu - idlePerSecond * seconds) * 1e6) / requests;
  return { ...result, connections: options.connections, cpuUsPerRequest, busyCpuUsPerRequest, rssMb: rssMb(pid) };
}

/** The all-in-one's scenarios: the same requests as the full topology's, straight to its one port. */
export function allInOneRequest(name: Exclude<ScenarioName, 'stats'>, baseUrl: string, uuids: readonly string[]): Omit<LoadOptions, 'connections' | 'durationSeconds'> {
  const request = scenarioRequest(name, baseUrl, uuids);
  return { ...request, scenario: name === 'read' ? 'all-in-one: metadata read (SQLite)' : 'all-in-one: create (SQLite, durable)' };
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 1);
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const warmup = Number(process.env.BENCH_WARMUP ?? 3);
  const connectionsList = (process.env.BENCH_AIO_CONNECTIONS ?? '50,10,1').split(',').map(Number);
  const children: Child[] = [];
  cleanUpOnSignal(children, []);
  const logDir = mkdtempSync(join(tmpdir(), 'vanish-bench-aio-logs-'));
  log(`logs: ${logDir}; load average ${loadAverage()}`);
  try {
    for (let round = 1; round <= rounds; round += 1) {
      const aio = await startAllInOne({ logDir, logLevel: 'warn', main: process.env.BENCH_AIO_MAIN });
      children.push(aio.child);
      const uuids = await seedNotes(aio.baseUrl, 200);
      const rows: AioMeasurement[] = [];
      for (const scenario of ['create', 'read'] as const) {
        for (const connections of connectionsList) {
          rows.push(await measureAllInOne(aio, { ...allInOneRequest(scenario, aio.baseUrl, uuids), connections, durationSeconds: duration }, warmup));
        }
      }
      for (const r of rows) {
        process.stdout.write(`round ${round} | ${r.scenario} | c${r.connections} | ${fmt(r.requestsPerSecond)} req/s | p50 ${fmt(r.p50, 1)} ms | ` +
          `p99 ${fmt(r.p99, 1)} ms | errors ${r.errors} | CPU ${fmt(r.cpuUsPerRequest)} µs/request (${fmt(r.busyCpuUsPerRequest)} less idle) | RSS ${fmt(r.rssMb ?? NaN)} MB | load ${loadAverage()}\n`);
      }
      await aio.child.stop();
      children.splice(children.indexOf(aio.child), 1);
    }
  } finally {
    for (const child of children.splice(0)) await child.stop();
  }
}

runIfMain(module, main);

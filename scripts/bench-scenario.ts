// `npm run bench:scenario -- <read|create|stats>`: one scenario of `npm run bench` against the full topology,
// to see where its CPU goes. Prints requests/s and latency, then the CPU µs per request of every process the
// request touches: the four services, RabbitMQ, MariaDB, Redis and the load generator (autocannon, in this
// process), and the MariaDB statements per request. With BENCH_CPU_PROF=1 the services also write CPU
// profiles (`node --cpu-prof`) into the log directory printed at the start.
// Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (3), BENCH_CONNECTIONS (50), MARIADB_URL, REDIS_URL, AMQP_URL.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import {
  STATEMENT_COUNTERS, cleanUpOnSignal, cpuSeconds, fmt, log, mariadbPid, oldestPid, runAutocannon, statementCounts, type Child, type LoadOptions,
} from './bench-lib';
import { MARIADB_URL, scenarioRequest, seedNotes, startTopology, type ScenarioName } from './bench-topology';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SCENARIOS: readonly ScenarioName[] = ['read', 'create', 'stats'];

/** RSS and V8 heap of a service, from its admin /metrics (prom-client's default process metrics). */
async function memoryOf(adminPort: number): Promise<string> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
    const mb = (metric: string): string => {
      const line = text.split('\n').find((l) => l.startsWith(`${metric}{`) || l.startsWith(`${metric} `));
      return line ? fmt(Number(line.slice(line.lastIndexOf(' ') + 1)) / 1048576) : '?';
    };
    return ['process_resident_memory_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_external_memory_bytes'].map(mb).join(' / ');
  } catch {
    return 'n/a';
  }
}

async function main(): Promise<void> {
  const scenario = process.argv[2] as ScenarioName;
  if (!SCENARIOS.includes(scenario)) {
    console.error(`usage: npm run bench:scenario -- <${SCENARIOS.join('|')}>`);
    process.exit(2);
  }
  const children: Child[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  cleanUpOnSignal(children, cleanups);
  const logDir = mkdtempSync(join(tmpdir(), 'vanish-bench-scenario-logs-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'vanish-bench-scenario-data-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  log(`logs (and CPU profiles with BENCH_CPU_PROF=1) of the services: ${logDir}`);
  try {
    const topology = await startTopology({ logDir, dataDir, logLevel: 'warn', children, cleanups });
    const base = topology.baseUrl;
    const uuids = scenario === 'read' ? await seedNotes(base, 200) : [];
    const options: LoadOptions = { ...scenarioRequest(scenario, base, uuids), connections: CONNECTIONS, durationSeconds: DURATION };
    if (WARMUP > 0) await runAutocannon({ ...options, durationSeconds: WARMUP });

    const processes: Record<string, number | undefined> = {
      ...Object.fromEntries(Object.entries(topology.services).map(([name, child]) => [name, child.process.pid])),
      rabbitmq: oldestPid('beam.smp'),
      mariadb: mariadbPid(),
      redis: oldestPid('redis-server'),
    };
    const db = await mysql.createConnection(MARIADB_URL);
    const statementsBefore = await statementCounts(db);
    const cpuBefore = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds([pid])]));
    const loaderBefore = process.cpuUsage();
    const result = await runAutocannon(options);
    const loader = process.cpuUsage(loaderBefore);
    const cpuAfter = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds([pid])]));
    const statementsAfter = await statementCounts(db);
    await db.end();

    const requests = Math.max(1, result.total);
    const perRequest = (seconds: number): number => (seconds * 1e6) / requests;
    const cpu: Array<[string, number]> = Object.keys(processes).map((name) => [name, perRequest(cpuAfter[name] - cpuBefore[name])]);
    cpu.push(['autocannon', (loader.user + loader.system) / requests]);
    log(`${scenario}: ${fmt(result.requestsPerSecond)} requests/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}`);
    log(`CPU µs per request: ${cpu.map(([name, us]) => `${name} ${fmt(us)}`).join(', ')}; total ${fmt(cpu.reduce((sum, [, us]) => sum + us, 0))}`);
    log(`MariaDB statements per request: ${STATEMENT_COUNTERS.map((name) => `${name} ${fmt((statementsAfter[name] - statementsBefore[name]) / requests, 3)}`).join(', ')}`);
    log(`memory after the run, MB (RSS / V8 heap total / heap used / external): ${(await Promise.all(
      Object.entries(topology.ports).map(async ([name, [, adminPort]]) => `${name} ${await memoryOf(adminPort)}`),
    )).join(', ')}`);
  } finally {
    for (const child of children.splice(0).reverse()) await child.stop();
    for (const cleanup of cleanups.splice(0).reverse()) {
      try {
        await cleanup();
      } catch (error) {
        log(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

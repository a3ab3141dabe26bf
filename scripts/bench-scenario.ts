// `npm run bench:scenario -- <read|create|stats>`: one scenario of `npm run bench` against the full topology,
// to see where its CPU goes. Prints requests/s and latency, then the CPU µs per request of every process the
// request touches: the four services, RabbitMQ, MariaDB, Redis and the load generator (autocannon, in this
// process), and the MariaDB statements per request. With BENCH_CPU_PROF=1 the services also write CPU
// profiles (`node --cpu-prof`) into the log directory printed at the start. `read-direct` sends the same
// reads straight to notes (no gateway: the bench's diagnostic row), to tell the relay's share from notes' own.
// Env: BENCH_DURATION (s, default 10), BENCH_WARMUP (3), BENCH_CONNECTIONS (50), BENCH_RATE (requests/s over
// all connections, autocannon's overallRate; unset: as fast as answered, so that a direct and a relayed run can
// be compared at the same rate), BENCH_SYSCALLS=<service> (count that service's system calls and context
// switches per request with `perf stat` tracepoints: what a request costs in sends, reads and wake-ups, which
// the machine's load hardly changes), MARIADB_URL, REDIS_URL, AMQP_URL.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
const RATE = Number(process.env.BENCH_RATE ?? 0);
const SYSCALLS_OF = process.env.BENCH_SYSCALLS;
const COUNTED_SYSCALLS = ['read', 'write', 'writev', 'epoll_wait', 'epoll_pwait', 'epoll_ctl', 'futex'];

/** `perf stat` counting the system calls of one process until stopped; resolves with the counts per event. */
function countSyscalls(pid: number): { stop: () => Promise<Record<string, number>> } {
  const events = ['raw_syscalls:sys_enter', 'sched:sched_switch', ...COUNTED_SYSCALLS.map((name) => `syscalls:sys_enter_${name}`)];
  const perf = spawn('perf', ['stat', '-x', ',', '--per-thread', '-e', events.join(','), '-p', String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  perf.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<void>((resolve) => perf.once('exit', () => resolve()));
  return {
    stop: async () => {
      perf.kill('SIGINT');
      await exited;
      // --per-thread lines: thread-tid,count,,event,...: the main thread's only (libuv's and V8's threads aside).
      const counts: Record<string, number> = {};
      for (const line of output.split('\n')) {
        const [thread, count, , event] = line.split(',');
        if (!thread || !event || !thread.endsWith(`-${pid}`)) continue;
        counts[event.replace(/^.*:(sys_enter_)?/, '')] = Number(count);
      }
      return counts;
    },
  };
}

/** Context switches of a process's main thread so far (voluntary: it waited; involuntary: it was preempted). */
function contextSwitches(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const of = (field: string): number => Number(/\s(\d+)/.exec(status.slice(status.indexOf(field)))?.[1] ?? 0);
  return of('voluntary_ctxt_switches') + of('nonvoluntary_ctxt_switches');
}
const SCENARIOS: readonly string[] = ['read', 'create', 'stats', 'read-direct'];

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
  const scenario = process.argv[2];
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
    const uuids = scenario.startsWith('read') ? await seedNotes(base, 200) : [];
    const request = scenario === 'read-direct'
      ? { scenario: 'metadata read straight to notes (no gateway)', url: `http://127.0.0.1:${topology.ports.notes[0]}`, paths: uuids.map((u) => `/api/view/${u}.php`) }
      : scenarioRequest(scenario as ScenarioName, base, uuids);
    const options: LoadOptions = {
      ...request, connections: CONNECTIONS, durationSeconds: DURATION, ...(RATE > 0 ? { overallRate: RATE } : {}),
    };
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
    const counted = SYSCALLS_OF ? processes[SYSCALLS_OF] : undefined;
    const perf = counted === undefined ? undefined : countSyscalls(counted);
    const switchesBefore = counted === undefined ? 0 : contextSwitches(counted);
    const loaderBefore = process.cpuUsage();
    const result = await runAutocannon(options);
    const loader = process.cpuUsage(loaderBefore);
    const switches = counted === undefined ? 0 : contextSwitches(counted) - switchesBefore;
    const syscalls = await perf?.stop();
    const cpuAfter = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds([pid])]));
    const statementsAfter = await statementCounts(db);
    await db.end();

    const requests = Math.max(1, result.total);
    const perRequest = (seconds: number): number => (seconds * 1e6) / requests;
    const cpu: Array<[string, number]> = Object.keys(processes).map((name) => [name, perRequest(cpuAfter[name] - cpuBefore[name])]);
    cpu.push(['autocannon', (loader.user + loader.system) / requests]);
    log(`${scenario}: ${fmt(result.requestsPerSecond)} requests/s, p50 ${result.p50} ms, p99 ${result.p99} ms, errors ${result.errors}`);
    log(`CPU µs per request: ${cpu.map(([name, us]) => `${name} ${fmt(us)}`).join(', ')}; total ${fmt(cpu.reduce((sum, [, us]) => sum + us, 0))}`);
    if (syscalls) {
      log(`${SYSCALLS_OF}'s main thread per request: ${Object.entries(syscalls).map(([name, count]) => `${name} ${fmt(count / requests, 2)}`).join(', ')}; context switches (/proc) ${fmt(switches / requests, 2)}`);
    }
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

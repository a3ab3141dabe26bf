// Any HTTP service already running on this machine (a peer such as PrivateBin or SnapPass, or a vanish
// deployment started by hand), measured the way issue 35 measures: wrk -t1 -c50 -d10s after a warm-up, three
// rounds, medians; CPU per request is the user + system time of every process under the given PIDs (their
// children too, those that exited during the run included) over the requests answered, and separately of the
// shared servers named with --backing; the size of those processes after the load (RSS and PSS).
//
//   node scripts/dist/bench-service.js --url http://127.0.0.1:8081/ --pids 1234,5678 \
//     [--method POST] [--body-file body.json] [--header 'Content-Type: application/json'] \
//     [--paths-file paths.txt] [--backing redis-server,mariadbd,beam.smp] [--rounds 3]
//
// --paths-file: one request path per line (e.g. /?<paste id>), rotated over. Env: BENCH_DURATION (s, 10),
// BENCH_WARMUP (3), BENCH_CONNECTIONS (50). Nothing is started or stopped here: the service is the caller's.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, loadAverage, log, oldestPid, percentile, runWrk, type LoadOptions, type LoadResult } from './bench-lib';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TICKS_PER_SECOND = 100; // USER_HZ on Linux

interface ProcessTimes {
  parent: number;
  /** utime + stime + cutime + cstime: a child that exits is reaped into its parent's cutime and cstime. */
  ticks: number;
}

function processTable(): Map<number, ProcessTimes> {
  const table = new Map<number, ProcessTimes>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      table.set(Number(entry), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]) });
    } catch {
      // the process is gone
    }
  }
  return table;
}

/** The given processes and all their descendants alive now (php-fpm's and nginx's workers, gunicorn's). */
function processTree(roots: number[], table = processTable()): number[] {
  const tree = new Set(roots.filter((pid) => table.has(pid)));
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, times] of table) {
      if (!tree.has(pid) && tree.has(times.parent)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

function treeCpuSeconds(roots: number[]): number {
  const table = processTable();
  return processTree(roots, table).reduce((sum, pid) => sum + (table.get(pid)?.ticks ?? 0), 0) / TICKS_PER_SECOND;
}

/** Sum of a /proc/<pid>/<file> field in kB over the tree, in MB (RSS counts shared pages once per process; PSS splits them). */
function treeMemoryMb(roots: number[], file: 'status' | 'smaps_rollup', field: 'VmRSS' | 'Pss'): number {
  let kb = 0;
  for (const pid of processTree(roots)) {
    try {
      kb += Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'))?.[1] ?? 0);
    } catch {
      // the process is gone
    }
  }
  return kb / 1024;
}

interface Round extends LoadResult {
  load: string;
  cpuUs: number;
  backingUs: Record<string, number>;
}

function measure(request: LoadOptions, pids: number[], backing: Record<string, number>, scriptDir: string): Round {
  if (WARMUP > 0) runWrk({ ...request, durationSeconds: WARMUP }, scriptDir, 1);
  const load = loadAverage();
  const before = treeCpuSeconds(pids);
  const backingBefore = Object.fromEntries(Object.entries(backing).map(([name, pid]) => [name, treeCpuSeconds([pid])]));
  const result = runWrk(request, scriptDir, 1);
  if (!result) throw new Error('wrk is not installed (apt-get install wrk)');
  const perRequest = (seconds: number): number => (seconds * 1e6) / Math.max(1, result.total);
  return {
    ...result, load, cpuUs: perRequest(treeCpuSeconds(pids) - before),
    backingUs: Object.fromEntries(Object.entries(backing).map(([name, pid]) => [name, perRequest(treeCpuSeconds([pid]) - backingBefore[name])])),
  };
}

function main(): void {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' }, pids: { type: 'string' }, method: { type: 'string' }, 'body-file': { type: 'string' },
      header: { type: 'string', multiple: true }, 'paths-file': { type: 'string' }, backing: { type: 'string' }, rounds: { type: 'string' },
    },
  });
  if (!values.url || !values.pids) throw new Error('usage: bench-service.js --url <url> --pids <pid,pid...> [--method] [--body-file] [--header]... [--paths-file] [--backing] [--rounds]');
  const pids = values.pids.split(',').map(Number);
  const backing: Record<string, number> = {};
  for (const name of (values.backing ?? '').split(',').filter(Boolean)) {
    const pid = oldestPid(name);
    if (pid === undefined) throw new Error(`no running process matches ${name}`);
    backing[name] = pid;
  }
  const headers = Object.fromEntries((values.header ?? []).map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon).trim(), line.slice(colon + 1).trim()];
  }));
  const request: LoadOptions = {
    scenario: values.url, url: values.url, connections: CONNECTIONS, durationSeconds: DURATION,
    method: values.method === 'POST' ? 'POST' : 'GET', headers,
    body: values['body-file'] ? readFileSync(values['body-file'], 'utf8').trim() : undefined,
    paths: values['paths-file'] ? readFileSync(values['paths-file'], 'utf8').split('\n').map((p) => p.trim()).filter(Boolean) : undefined,
  };
  const scriptDir = mkdtempSync(join(tmpdir(), 'vanish-bench-service-'));
  const rounds: Round[] = [];
  try {
    for (let round = 1; round <= Number(values.rounds ?? 3); round += 1) {
      const r = measure(request, pids, backing, scriptDir);
      rounds.push(r);
      const shared = Object.entries(r.backingUs).map(([name, us]) => `, ${name} ${fmt(us)} µs`).join('');
      log(`round ${round}: ${fmt(r.requestsPerSecond)} requests/s, p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, errors ${r.errors}, ` +
        `CPU ${fmt(r.cpuUs)} µs per request${shared}, load ${r.load}`);
    }
  } finally {
    rmSync(scriptDir, { recursive: true, force: true });
  }
  const median = (pick: (r: Round) => number): number => percentile(rounds.map(pick), 50);
  const sharedMedians = Object.keys(backing).map((name) => `, ${name} ${fmt(median((r) => r.backingUs[name]))} µs`).join('');
  console.log(`medians of ${rounds.length}: ${fmt(median((r) => r.requestsPerSecond))} requests/s, p99 ${fmt(median((r) => r.p99), 1)} ms, ` +
    `CPU ${fmt(median((r) => r.cpuUs))} µs per request${sharedMedians}; after the load: RSS ${fmt(treeMemoryMb(pids, 'status', 'VmRSS'))} MB, ` +
    `PSS ${fmt(treeMemoryMb(pids, 'smaps_rollup', 'Pss'))} MB (${processTree(pids).length} processes); load ${rounds.map((r) => r.load).join(', ')}`);
}

main();

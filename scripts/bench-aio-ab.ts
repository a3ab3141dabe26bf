// Builds of the all-in-one side by side, for A/B runs on a shared machine:
//
//   node scripts/dist/bench-aio-ab.js <rounds> <requests/s> <A main.js> <B main.js> [more main.js]
//
// starts every build as `npm start` does (startAllInOne: its node flags, a fresh DATA_DIR each; a build given as
// `<main.js>::<node flags>` runs with those flags instead, to A/B a flag), then loads them
// all AT THE SAME TIME with creates (or metadata reads: BENCH_AB_SCENARIO=read) at the same fixed rate (autocannon's overall rate, 50 connections each), so
// that each round gives every build the same machine and the same batch sizes. Prints, per round and build, the
// creates answered per second and the CPU µs per create of the process (utime + stime of every thread over the
// measured seconds), split into the HTTP thread, the SQLite thread (the worker thread) and V8's GC threads. The
// builds start in the opposite order every other round. Env: BENCH_DURATION (10), BENCH_WARMUP (2).
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allInOneRequest, startAllInOne, type AllInOne } from './bench-all-in-one';
import { cleanUpOnSignal, fmt, loadAverage, log, runAutocannon, type Child } from './bench-lib';
import { seedNotes } from './bench-topology';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

type ThreadKind = 'http' | 'sqlite' | 'gc' | 'other';

/** CPU ticks used so far by each kind of thread of a process, from /proc/<pid>/task/<tid>/stat. */
function ticksByThread(pid: number): Record<ThreadKind, number> {
  const ticks: Record<ThreadKind, number> = { http: 0, sqlite: 0, gc: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const used = Number(fields[11]) + Number(fields[12]);
    // The process's first thread serves HTTP; node names a worker thread "WorkerThread" and V8's helpers "V8Worker".
    const kind: ThreadKind = Number(tid) === pid ? 'http' : name.startsWith('WorkerThread') ? 'sqlite' : name.startsWith('V8Worker') ? 'gc' : 'other';
    ticks[kind] += used;
  }
  return ticks;
}

async function main(): Promise<void> {
  const [roundsArg, rateArg, ...builds] = process.argv.slice(2);
  const mains = builds.map((build) => build.split('::')[0]!);
  const nodeFlags = builds.map((build) => (build.includes('::') ? build.split('::')[1]!.split(' ').filter(Boolean) : undefined));
  const scenario = process.env.BENCH_AB_SCENARIO === 'read' ? 'read' : 'create';
  const rounds = Number(roundsArg);
  const rate = Number(rateArg);
  if (!(rounds > 0) || !(rate > 0) || mains.length < 2) {
    throw new Error('usage: node scripts/dist/bench-aio-ab.js <rounds> <requests/s> <A main.js[::node flags]> <B main.js[::node flags]> [more]');
  }
  const duration = Number(process.env.BENCH_DURATION ?? 10);
  const warmup = Number(process.env.BENCH_WARMUP ?? 2);
  const children: Child[] = [];
  cleanUpOnSignal(children, []);
  const logDir = mkdtempSync(join(tmpdir(), 'vanish-bench-aio-ab-logs-'));
  log(`logs: ${logDir}; ${mains.length} builds at ${rate} ${scenario}s/s each, ${duration} s per round`);
  const perBuild: string[][] = mains.map(() => []);
  try {
    for (let round = 1; round <= rounds; round += 1) {
      const order = mains.map((_, index) => index);
      if (round % 2 === 0) order.reverse();
      const running: AllInOne[] = [];
      for (const index of order) {
        running[index] = await startAllInOne({ logDir, logLevel: 'warn', main: mains[index], name: `build-${index}`, nodeFlags: nodeFlags[index] });
        children.push(running[index]!.child);
      }
      const seeded = await Promise.all(running.map((aio) => seedNotes(aio.baseUrl, scenario === 'read' ? 200 : 20)));
      const load = (seconds: number) => Promise.all(running.map((aio, index) => runAutocannon({
        ...allInOneRequest(scenario, aio.baseUrl, seeded[index]!), connections: 50, durationSeconds: seconds, overallRate: rate,
      })));
      if (warmup > 0) await load(warmup);
      const loadBefore = loadAverage();
      const before = running.map((aio) => ticksByThread(aio.child.process.pid!));
      const results = await load(duration);
      const after = running.map((aio) => ticksByThread(aio.child.process.pid!));
      running.forEach((_, index) => {
        const creates = Math.max(1, results[index]!.total); // requests of the scenario, creates or reads
        const us = (kind: ThreadKind) => ((after[index]![kind] - before[index]![kind]) * 1e6) / TICKS_PER_SECOND / creates;
        const total = us('http') + us('sqlite') + us('gc') + us('other');
        perBuild[index]!.push(fmt(total));
        process.stdout.write(`round ${round} | build ${index} | ${fmt(results[index]!.requestsPerSecond)} ${scenario}s/s | errors ${results[index]!.errors} | `
          + `CPU ${fmt(total)} µs/${scenario} (HTTP thread ${fmt(us('http'))}, SQLite thread ${fmt(us('sqlite'))}, GC threads ${fmt(us('gc'))}, other ${fmt(us('other'))}) | `
          + `load ${loadBefore} -> ${loadAverage()}\n`);
      });
      for (const aio of running) {
        await aio.child.stop();
        children.splice(children.indexOf(aio.child), 1);
      }
    }
  } finally {
    for (const child of children.splice(0)) await child.stop();
  }
  builds.forEach((build, index) => process.stdout.write(`build ${index} (${build}): CPU µs/${scenario} ${perBuild[index]!.join(' / ')}\n`));
}

main().catch((error: unknown) => {
  log(`FAILED: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
  process.exit(1);
});

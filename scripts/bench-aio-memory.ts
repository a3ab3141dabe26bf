// Where the all-in-one's memory goes under load (issue 35's 150 MB goal), after `tsc -p scripts/tsconfig.bench.json`:
//
//   node scripts/dist/bench-aio-memory.js [scenario:connections,...]     (default create:50,create:10,create:1,read:50)
//
// starts the all-in-one as `npm start` does (scripts/bench-all-in-one.ts), then after it settles and after each
// load phase prints its RSS split by mapping (/proc/<pid>/smaps: the node binary's file-backed pages, glibc's main
// heap, thread arenas, the rest of the anonymous memory: mostly V8's heaps) and the V8 heap's capacity from its own
// /metrics. Thread arenas are told apart as glibc lays them out: a read-write anonymous mapping followed by the
// inaccessible rest of its 64 MiB reservation, or a whole 64 MiB read-write one (an arena that filled its heap).
// BENCH_DURATION (10 s per phase), BENCH_AIO_NODE_ARGS (other flags than npm start's), BENCH_AIO_ENV ('K=V K=V':
// environment for the all-in-one alone, such as MALLOC_ARENA_MAX=1), BENCH_AIO_MAIN (another build).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allInOneRequest, startAllInOne } from './bench-all-in-one';
import { cleanUpOnSignal, fmt, loadAverage, log, rssMb, runAutocannon, runIfMain, type Child } from './bench-lib';
import { seedNotes } from './bench-topology';

const ARENA_RESERVATION = 64 * 1024 * 1024;
const DURATION = Number(process.env.BENCH_DURATION ?? 10);

interface Mapping { start: number; end: number; perms: string; name: string; rssKb: number }

function mappings(pid: number): Mapping[] {
  const list: Mapping[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      list.push({ start: parseInt(head[1], 16), end: parseInt(head[2], 16), perms: head[3], name: head[4], rssKb: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && list.length > 0) list[list.length - 1].rssKb = Number(rss[1]);
  }
  return list;
}

/** RSS in MB by kind of mapping. */
function memoryByKind(pid: number): Record<'nodeBinary' | 'mainHeap' | 'threadArenas' | 'otherAnonymous' | 'otherFiles', number> {
  const list = mappings(pid);
  const kinds = { nodeBinary: 0, mainHeap: 0, threadArenas: 0, otherAnonymous: 0, otherFiles: 0 };
  list.forEach((m, i) => {
    const mb = m.rssKb / 1024;
    if (m.name === '[heap]') kinds.mainHeap += mb;
    else if (m.name.endsWith('/node')) kinds.nodeBinary += mb;
    else if (m.name === '' && m.perms === 'rw-p') {
      const next = list[i + 1];
      const reservedRest = next && next.name === '' && next.perms === '---p' && next.start === m.end && next.end - m.start === ARENA_RESERVATION;
      const fullArena = m.end - m.start === ARENA_RESERVATION && m.start % ARENA_RESERVATION === 0;
      if (reservedRest || fullArena) kinds.threadArenas += mb;
      else kinds.otherAnonymous += mb;
    } else if (m.name === '') kinds.otherAnonymous += mb;
    else kinds.otherFiles += mb;
  });
  return kinds;
}

async function heapCapacity(adminPort: number): Promise<{ total: number; old: number; young: number }> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  const value = (pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? NaN) / 1024 / 1024;
  return {
    total: value(/^nodejs_heap_size_total_bytes(?:\{[^}]*\})? (\S+)/m),
    old: value(/^nodejs_heap_space_size_total_bytes\{[^}]*space="old"[^}]*\} (\S+)/m),
    young: value(/^nodejs_heap_space_size_total_bytes\{[^}]*space="new"[^}]*\} (\S+)/m),
  };
}

async function main(): Promise<void> {
  const phases = (process.argv[2] ?? 'create:50,create:10,create:1,read:50').split(',').map((phase) => {
    const [scenario, connections] = phase.split(':');
    if ((scenario !== 'create' && scenario !== 'read') || !(Number(connections) > 0)) throw new Error(`a phase is create:<connections> or read:<connections>, not ${phase}`);
    return { scenario: scenario as 'create' | 'read', connections: Number(connections) };
  });
  const children: Child[] = [];
  cleanUpOnSignal(children, []);
  const logDir = mkdtempSync(join(tmpdir(), 'vanish-bench-aio-memory-'));
  const env = Object.fromEntries((process.env.BENCH_AIO_ENV ?? '').split(' ').filter(Boolean).map((pair) => pair.split('=', 2) as [string, string]));
  const aio = await startAllInOne({ logDir, logLevel: 'warn', main: process.env.BENCH_AIO_MAIN, env });
  children.push(aio.child);
  const pid = aio.child.process.pid!;
  const report = async (label: string): Promise<void> => {
    const kinds = memoryByKind(pid);
    const heap = await heapCapacity(aio.adminPort);
    process.stdout.write(`${label} | RSS ${fmt(rssMb(pid) ?? NaN, 1)} MB | node binary ${fmt(kinds.nodeBinary, 1)} | main heap (brk) ${fmt(kinds.mainHeap, 1)} | ` +
      `thread arenas ${fmt(kinds.threadArenas, 1)} | other anonymous ${fmt(kinds.otherAnonymous, 1)} | other files ${fmt(kinds.otherFiles, 1)} | ` +
      `V8 heap capacity ${fmt(heap.total, 1)} (old ${fmt(heap.old, 1)}, young ${fmt(heap.young, 1)}) | load ${loadAverage()}\n`);
  };
  try {
    log(`logs: ${logDir}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await report('at rest');
    const uuids = await seedNotes(aio.baseUrl, 200);
    for (const { scenario, connections } of phases) {
      const result = await runAutocannon({ ...allInOneRequest(scenario, aio.baseUrl, uuids), connections, durationSeconds: DURATION });
      await report(`after ${scenario} at ${connections} connections (${fmt(result.requestsPerSecond)}/s)`);
    }
  } finally {
    for (const child of children.splice(0)) await child.stop();
  }
}

runIfMain(module, main);

// `node scripts/dist/bench-files.js` (after `npm run build && tsc -p scripts/tsconfig.bench.json`; part of
// `npm run bench`): files (DECISIONS 14) through the gateway, as a user moves them. A file of BENCH_FILE_BYTES
// (default 1 GiB) is made on disk, then `vanish create --attach` seals and uploads it and `vanish open --out`
// downloads, opens and writes it, first through the all-in-one process, then through the gateway and notes as
// separate processes (gateway limits in Redis). Throughput is the file's bytes over each command's wall time
// (sealing and opening on the client included); every server process's RSS is read before, sampled during
// (peak) and read after, and each vanish process reports its own peak. Goal: at least 200 MB/s each way on
// loopback, and no process growing by more than 64 MB. Writes the `files` section of docs/performance.md.
// CPU seconds (user + system, from /proc and the vanish processes' own resource usage) per GiB are given for
// every process and each way: unlike MB/s they hardly move with the machine's load.
// Env: BENCH_FILE_BYTES, BENCH_VANISH_CLI (another vanish.js, for A/B runs of the client), REDIS_URL (redis://127.0.0.1:6379), BENCH_LOG_LEVEL (warn), BENCH_TOPOLOGY (all-in-one
// or separate: only that one), BENCH_CPU_PROF (a folder: every process writes a --cpu-prof profile there),
// BENCH_NODE_ARGS (more node options for every process, e.g. --trace-gc), BENCH_KEEP_LOGS (keep the servers' logs),
// BENCH_BUILD_ROOT (another built checkout, e.g. main's in a second worktree: its servers and its vanish are measured,
// the A of an A/B); with a topology, a profile or another build, docs/performance.md is left alone. Each server's
// RSS peak is also given for the upload and the download apart.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, type Child, cleanUpOnSignal, cpuSeconds, fmt, freePort, loadAverage, log, machine, replaceSection, rssMb, startNode, waitReady } from './bench-lib';
import { hashFile, makeRandomFile } from '@vanish/testkit/dist/random-file';

const BYTES = Number(process.env.BENCH_FILE_BYTES ?? 2 ** 30);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'warn';
/** The checkout whose servers and client are measured: this one, or BENCH_BUILD_ROOT's (built there). */
const BUILD_ROOT = process.env.BENCH_BUILD_ROOT ?? ROOT;
const CLI = process.env.BENCH_VANISH_CLI ?? join(BUILD_ROOT, 'packages/cli/bin/vanish.js');
const REPORT_RSS = join(ROOT, 'test/support/report-max-rss.js');
const GOAL_MB_S = 200;
const GROWTH_LIMIT_MB = 64;
const TOPOLOGY = process.env.BENCH_TOPOLOGY;
const CPU_PROF = process.env.BENCH_CPU_PROF;
const PROF_ARGS = [...(CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []), ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)];

interface Topology { name: string; base: string; children: Child[] }
interface ProcessMemory { name: string; before: number; peak: number; peakUp: number; peakDown: number; after: number; cpuUp: number; cpuDown: number }
interface Row {
  topology: string; upMbS: number; downMbS: number; cliUpMb: number; cliDownMb: number; cliCpuUp: number; cliCpuDown: number;
  memory: ProcessMemory[]; identical: boolean;
}


async function vanish(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string; seconds: number; peakMb: number; cpu: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [...PROF_ARGS, '--require', REPORT_RSS, CLI, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  const [code] = (await once(child, 'close')) as [number | null];
  const peak = /max-rss-kb=(\d+)/.exec(stderr);
  const cpu = /cpu-us=(\d+)/.exec(stderr);
  return { code, stdout, stderr, seconds: (performance.now() - started) / 1000, peakMb: peak ? Number(peak[1]) / 1024 : Number.NaN, cpu: cpu ? Number(cpu[1]) / 1e6 : Number.NaN };
}

/** Samples each child's RSS every 100 ms until stopped; returns the peaks. */
function sampleRss(children: Child[]): () => number[] {
  const peaks = children.map((child) => rssMb(child.process.pid) ?? 0);
  const timer = setInterval(() => {
    children.forEach((child, i) => { peaks[i] = Math.max(peaks[i]!, rssMb(child.process.pid) ?? 0); });
  }, 100);
  return () => { clearInterval(timer); return peaks; };
}

async function allInOne(dir: string): Promise<Topology> {
  const names = ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT'];
  const ports: Record<string, string> = {};
  for (const name of names) ports[name] = String(await freePort());
  const base = `http://127.0.0.1:${ports.PORT}`;
  const child = startNode('all-in-one', [...PROF_ARGS, join(BUILD_ROOT, 'services/all-in-one/dist/main.js')], {
    ...ports, DATA_DIR: join(dir, 'aio'), PUBLIC_BASE_URL: base, LOG_LEVEL, FILE_MAX_BYTES: String(2 * BYTES), FILE_BYTES_PER_HOUR: String(8 * BYTES),
    RATE_LIMIT_CREATE_PER_HOUR: '100000', RATE_LIMIT_VIEW_PER_HOUR: '100000',
  }, dir);
  await waitReady(child, `http://127.0.0.1:${ports.ADMIN_PORT}/readyz`);
  return { name: 'all-in-one (one process)', base, children: [child] };
}

async function separate(dir: string): Promise<Topology> {
  const [gatewayPort, gatewayAdmin, notesPort, notesAdmin] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const base = `http://127.0.0.1:${gatewayPort}`;
  const notes = startNode('notes', [...PROF_ARGS, join(BUILD_ROOT, 'services/notes/dist/main.js')], {
    PORT: String(notesPort), ADMIN_PORT: String(notesAdmin), DATA_DIR: join(dir, 'notes'), DATABASE_URL: `sqlite:${join(dir, 'notes.db')}`,
    PUBLIC_BASE_URL: base, LOG_LEVEL, FILE_MAX_BYTES: String(2 * BYTES),
  }, dir);
  await waitReady(notes, `http://127.0.0.1:${notesAdmin}/readyz`);
  const gateway = startNode('gateway', [...PROF_ARGS, join(BUILD_ROOT, 'services/gateway/dist/main.js')], {
    PORT: String(gatewayPort), ADMIN_PORT: String(gatewayAdmin), DATA_DIR: join(dir, 'gateway'), NOTES_URL: `http://127.0.0.1:${notesPort}`,
    STATS_URL: 'http://127.0.0.1:9', MAILER_URL: 'http://127.0.0.1:9', REDIS_URL, LOG_LEVEL, FILE_BYTES_PER_HOUR: String(8 * BYTES),
    RATE_LIMIT_CREATE_PER_HOUR: '100000', RATE_LIMIT_VIEW_PER_HOUR: '100000',
  }, dir);
  await waitReady(gateway, `http://127.0.0.1:${gatewayAdmin}/readyz`);
  return { name: 'gateway + notes (separate processes, limits in Redis)', base, children: [gateway, notes] };
}

async function measure(topology: Topology, file: string, digest: string, dir: string): Promise<Row> {
  const cpuOf = () => topology.children.map((child) => cpuSeconds([child.process.pid]));
  const before = topology.children.map((child) => rssMb(child.process.pid) ?? 0);
  const stopSamplingUp = sampleRss(topology.children);
  const cpu0 = cpuOf();
  const created = await vanish(['create', '--server', topology.base, '--attach', file], dir);
  if (created.code !== 0) throw new Error(`vanish create failed: ${created.stderr}`);
  const cpu1 = cpuOf();
  const peaksUp = stopSamplingUp();
  const stopSamplingDown = sampleRss(topology.children);
  const out = mkdtempSync(join(dir, 'out-'));
  const opened = await vanish(['open', '--out', out, created.stdout.trim()], dir);
  if (opened.code !== 0) throw new Error(`vanish open failed: ${opened.stderr}`);
  const cpu2 = cpuOf();
  const peaksDown = stopSamplingDown();
  const written = join(out, readdirSync(out)[0]!);
  const identical = (await hashFile(written)) === digest;
  rmSync(out, { recursive: true, force: true });
  const after = topology.children.map((child) => rssMb(child.process.pid) ?? 0);
  const mb = BYTES / 1e6;
  const gib = BYTES / 2 ** 30;
  return {
    topology: topology.name,
    upMbS: mb / created.seconds,
    downMbS: mb / opened.seconds,
    cliUpMb: created.peakMb,
    cliDownMb: opened.peakMb,
    cliCpuUp: created.cpu / gib,
    cliCpuDown: opened.cpu / gib,
    memory: topology.children.map((child, i) => ({
      name: child.name, before: before[i]!, peak: Math.max(peaksUp[i]!, peaksDown[i]!), peakUp: peaksUp[i]!, peakDown: peaksDown[i]!, after: after[i]!, cpuUp: (cpu1[i]! - cpu0[i]!) / gib, cpuDown: (cpu2[i]! - cpu1[i]!) / gib,
    })),
    identical,
  };
}

async function main(): Promise<void> {
  const load = loadAverage();
  log(`files bench: ${fmt(BYTES / 2 ** 20)} MiB up and down through the gateway; build ${BUILD_ROOT}; ${machine()}; load ${load}`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-files-'));
  const children: Child[] = [];
  cleanUpOnSignal(children, [async () => rmSync(dir, { recursive: true, force: true })]);
  const rows: Row[] = [];
  try {
    const file = join(dir, 'file.bin');
    const digest = await makeRandomFile(file, BYTES);
    const topologies = [allInOne, separate].filter((start) => TOPOLOGY === undefined || (TOPOLOGY === 'all-in-one') === (start === allInOne));
    for (const start of topologies) {
      const topology = await start(dir);
      children.push(...topology.children);
      try {
        const row = await measure(topology, file, digest, dir);
        rows.push(row);
        log(`${row.topology}: up ${fmt(row.upMbS, 1)} MB/s, down ${fmt(row.downMbS, 1)} MB/s, identical ${row.identical}; ${row.memory.map((m) => `${m.name} ${fmt(m.before)} → peak ${fmt(m.peak)} (up ${fmt(m.peakUp)}, down ${fmt(m.peakDown)}) → ${fmt(m.after)} MB`).join(', ')}; vanish peaks ${fmt(row.cliUpMb)} / ${fmt(row.cliDownMb)} MB; CPU s/GiB up/down: vanish ${fmt(row.cliCpuUp, 2)}/${fmt(row.cliCpuDown, 2)}, ${row.memory.map((m) => `${m.name} ${fmt(m.cpuUp, 2)}/${fmt(m.cpuDown, 2)}`).join(', ')}`);
      } finally {
        for (const child of topology.children) await child.stop();
      }
    }
  } finally {
    if (process.env.BENCH_KEEP_LOGS === undefined) rmSync(dir, { recursive: true, force: true });
    else for (const entry of readdirSync(dir)) if (!entry.endsWith('.log')) rmSync(join(dir, entry), { recursive: true, force: true });
  }
  if (process.env.BENCH_KEEP_LOGS !== undefined) log(`the processes' logs are kept in ${dir}`);
  const lines = [
    '## Files: 1 GiB through the gateway',
    '',
    `Measured by \`node scripts/dist/bench-files.js\` (part of \`npm run bench\`) on ${machine()}, load average ${load} at the start:`,
    `a file of ${fmt(BYTES / 2 ** 20)} MiB sealed and uploaded by \`vanish create --attach\`, then downloaded, opened and written by`,
    '`vanish open --out`, all on loopback; throughput is the file\'s bytes over each command\'s wall time (the client\'s',
    'sealing and opening included). RSS in MB: before the upload → peak during both → after the download.',
    `Goal: at least ${GOAL_MB_S} MB/s each way, no process growing by more than ${GROWTH_LIMIT_MB} MB.`,
    '',
    '| topology | up MB/s | down MB/s | same bytes | server processes (RSS MB) | vanish create / open peak RSS MB |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.topology} | ${fmt(row.upMbS, 1)} | ${fmt(row.downMbS, 1)} | ${row.identical ? 'yes' : 'NO'} | ${row.memory.map((m) => `${m.name} ${fmt(m.before)} → ${fmt(m.peak)} → ${fmt(m.after)}`).join('; ')} | ${fmt(row.cliUpMb)} / ${fmt(row.cliDownMb)} |`),
    '',
    'CPU seconds (user + system) per GiB moved, up / down: what each process spends, which the load hardly changes.',
    '',
    '| topology | vanish (create / open) | server processes |',
    '|---|---|---|',
    ...rows.map((row) => `| ${row.topology} | ${fmt(row.cliCpuUp, 2)} / ${fmt(row.cliCpuDown, 2)} | ${row.memory.map((m) => `${m.name} ${fmt(m.cpuUp, 2)} / ${fmt(m.cpuDown, 2)}`).join('; ')} |`),
  ];
  const grew = rows.flatMap((row) => row.memory.filter((m) => m.peak - m.before > GROWTH_LIMIT_MB).map((m) => `${row.topology}: ${m.name} grew ${fmt(m.peak - m.before)} MB`));
  const slow = rows.filter((row) => row.upMbS < GOAL_MB_S || row.downMbS < GOAL_MB_S).map((row) => row.topology);
  lines.push('', grew.length === 0 ? `No server process grew by more than ${GROWTH_LIMIT_MB} MB.` : `Over the memory goal: ${grew.join('; ')}.`);
  lines.push(slow.length === 0 ? `Both ways met ${GOAL_MB_S} MB/s.` : `Under ${GOAL_MB_S} MB/s here: ${slow.join('; ')} (read with the load average above: a shared machine runs below its own speed).`);
  if (TOPOLOGY === undefined && CPU_PROF === undefined && BUILD_ROOT === ROOT) {
    replaceSection(join(ROOT, 'docs', 'performance.md'), 'files', lines.join('\n'), '# Performance\n');
    log('wrote the files section of docs/performance.md');
  } else {
    log(`not written to docs/performance.md (one topology or profiled):\n${lines.join('\n')}`);
  }
  if (rows.some((row) => !row.identical)) process.exitCode = 1;
}

main().catch((err: Error) => {
  log(`files bench failed: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});

// Shared helpers of the benchmarks (scripts/bench.ts, scripts/bench-growth.ts): child processes with
// logs in files, free ports, readiness polling, autocannon runs, wrk runs, RSS, markdown and SVG output.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { cpus, freemem, loadavg, totalmem, release, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import type { Connection, RowDataPacket } from 'mysql2/promise';

export const ROOT = join(__dirname, '..', '..');

export function log(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/**
 * A port that is free now, below the kernel's ephemeral range (32768 to 60999 here): a port taken
 * from that range (listen on 0) can be handed to one of the services' own outgoing connections
 * (MariaDB, RabbitMQ) before the service listens on it, and the start fails with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  throw new Error('no free port found between 20000 and 32000');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '0.0.0.0', () => server.close(() => resolve(true)));
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const randomKey = (): string => randomBytes(32).toString('base64');
export const randomSuffix = (): string => randomBytes(4).toString('hex');

export interface Child {
  name: string;
  process: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

/** Starts `node <args>` with stdout and stderr going to a log file (so the bench never drains pipes). */
export function startNode(name: string, args: string[], env: Record<string, string>, logDir: string): Child {
  const logFile = join(logDir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...env },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return {
    name,
    process: child,
    logFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * On Ctrl-C or SIGTERM: stop the children and run the cleanups (drop the run's databases and vhost)
 * before exiting, so that an interrupted bench leaves nothing behind.
 */
export function cleanUpOnSignal(children: Child[], cleanups: (() => Promise<void>)[]): void {
  const handler = (signal: NodeJS.Signals): void => {
    log(`${signal}: stopping the services and cleaning up`);
    void stopAndCleanUp(children, cleanups).then(() => process.exit(130));
  };
  process.once('SIGINT', handler);
  process.once('SIGTERM', handler);
}

/** Stops the children (last started first), then runs the cleanups (last added first); empties both lists. */
export async function stopAndCleanUp(children: Child[], cleanups: (() => Promise<void>)[]): Promise<void> {
  // take the lists over, so that a second caller (a signal during the main flow's clean-up) finds nothing left to do twice
  const toStop = children.splice(0).reverse();
  const toRun = cleanups.splice(0).reverse();
  for (const child of toStop) await child.stop();
  for (const cleanup of toRun) {
    try {
      await cleanup();
    } catch (error) {
      log(`cleanup failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}

/** Waits until GET url answers 200 (a generous bound that only catches a service that never comes up). */
export async function waitReady(child: Child, url: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.process.exitCode !== null) {
      throw new Error(`${child.name} exited with ${child.process.exitCode} before it was ready; log:\n${tail(child.logFile)}`);
    }
    try {
      const res = await fetch(url);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${child.name} not ready at ${url} within ${timeoutMs} ms; log:\n${tail(child.logFile)}`);
    await sleep(250);
  }
}

export function tail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log)';
  return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU seconds (user + system) used so far by the given processes, from /proc/<pid>/stat. */
export function cpuSeconds(pids: Array<number | undefined>): number {
  let ticks = 0;
  for (const pid of pids) {
    if (pid === undefined) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of the line)
    } catch {
      // the process is gone
    }
  }
  return ticks / TICKS_PER_SECOND;
}

/** The pid of the machine's MariaDB server, if one runs. */
export function mariadbPid(): number | undefined {
  const run = spawnSync('pgrep', ['-x', 'mariadbd'], { encoding: 'utf8' });
  const pid = Number(run.stdout.trim().split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** The oldest process whose command line matches (e.g. RabbitMQ's `beam.smp`), if one runs. */
export function oldestPid(pattern: string): number | undefined {
  const run = spawnSync('pgrep', ['-o', '-f', pattern], { encoding: 'utf8' });
  const pid = Number(run.stdout.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

/** MariaDB's own counters of what clients asked of it (server-wide: run on a quiet machine). */
export const STATEMENT_COUNTERS = ['Questions', 'Com_begin', 'Com_commit', 'Com_insert', 'Com_select', 'Com_update', 'Com_delete'];

export async function statementCounts(db: Connection): Promise<Record<string, number>> {
  const [rows] = await db.query<RowDataPacket[]>('SHOW GLOBAL STATUS WHERE Variable_name IN (?)', [STATEMENT_COUNTERS]);
  return Object.fromEntries(rows.map((row) => [String(row.Variable_name), Number(row.Value)]));
}

/** Resident set size of a process in MB, from /proc. */
export function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

export interface LoadResult {
  scenario: string;
  /** CPU time (user + system) the processes under test spent per answered request, in ms. */
  cpuMsPerRequest?: number;
  /** The same for the MariaDB server (shared with other work on the machine: an upper bound). */
  dbCpuMsPerRequest?: number;
  /** The same for the load generator (autocannon runs in the bench's own process). */
  loaderCpuMsPerRequest?: number;
  /** CPU ms per request of each process under test, by name. */
  cpuByProcess?: Record<string, number>;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  errors: number;
  total: number;
  non2xx: number;
}

export interface LoadOptions {
  scenario: string;
  url: string;
  connections: number;
  durationSeconds: number;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  /** Rotates the request path, e.g. over several note uuids. */
  paths?: string[];
  /** Called with the time of every 200 answer (event-lag measurement). */
  onOk?: (at: number) => void;
  /** Requests per second over all connections (autocannon's overallRate); unset: as fast as answered. */
  overallRate?: number;
}

/** One autocannon run. Non-2xx answers count as errors (every scenario expects 200). */
export async function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  let index = 0;
  const paths = options.paths;
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSeconds,
    method: options.method ?? 'GET',
    body: options.body,
    headers: options.headers,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
    requests: [{
      setupRequest: (request) => {
        if (paths && paths.length > 0) {
          request.path = paths[index % paths.length];
          index += 1;
        }
        return request;
      },
      onResponse: (status) => {
        if (status === 200 && options.onOk) options.onOk(Date.now());
      },
    }],
  });
  const total = result.requests.total;
  return {
    scenario: options.scenario,
    requestsPerSecond: total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
    total,
    non2xx: result.non2xx,
  };
}

/**
 * One client, one request at a time, timed with hrtime (sub-millisecond, unlike autocannon's histogram):
 * the time of one answer without queueing. Every answer must be 200.
 */
export async function sequentialLatency(origin: string, paths: string[], count: number): Promise<{ p50: number; p99: number; mean: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i += 1) {
      const started = process.hrtime.bigint();
      const status = await new Promise<number>((resolve, reject) => {
        const req = request(`${origin}${paths[i % paths.length]}`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      });
      if (status !== 200) throw new Error(`sequential request answered ${status}`);
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  } finally {
    agent.destroy();
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), mean: times.reduce((a, b) => a + b, 0) / times.length };
}

/** CPU seconds (user + system) of this process's finished, waited-for children (wrk runs under spawnSync). */
function childrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / TICKS_PER_SECOND; // cutime, cstime (fields 16 and 17)
}

export const wrkInstalled = (): boolean => spawnSync('which', ['wrk'], { encoding: 'utf8' }).status === 0;

/** A Lua string literal for any text (decimal escapes for everything but plain printable ASCII). */
function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    out += byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/**
 * The wrk script that sends what an autocannon run of the same options sends: the method, body and
 * headers, and the rotation over `paths` (each of wrk's threads rotates on its own).
 */
export function wrkScript(options: Pick<LoadOptions, 'method' | 'body' | 'headers' | 'paths'>): string {
  const lines = [`wrk.method = ${luaString(options.method ?? 'GET')}`];
  if (options.body !== undefined) lines.push(`wrk.body = ${luaString(options.body)}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) lines.push(`wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  if (options.paths && options.paths.length > 0) {
    lines.push(`local paths = { ${options.paths.map(luaString).join(', ')} }`);
    lines.push('local next_path = 0');
    lines.push('request = function()');
    lines.push('  next_path = next_path % #paths + 1');
    lines.push('  return wrk.format(nil, paths[next_path])');
    lines.push('end');
  }
  return `${lines.join('\n')}\n`;
}

/**
 * One run of Debian's wrk (`-t2 --latency` unless told other threads, a Lua script for the method, body, headers and path
 * rotation) with the same options as an autocannon run, so that each scenario is measured by both
 * clients. Non-2xx answers and socket errors count as errors. wrk's own CPU per request is read from
 * this process's waited-for children. Undefined when wrk is not installed.
 */
export function runWrk(options: LoadOptions, scriptDir: string, threads = 2): LoadResult | undefined {
  if (!wrkInstalled()) return undefined;
  const script = join(scriptDir, `wrk-${randomSuffix()}.lua`);
  writeFileSync(script, wrkScript(options));
  const cpuBefore = childrenCpuSeconds();
  const run = spawnSync('wrk', [`-t${threads}`, `-c${options.connections}`, `-d${options.durationSeconds}s`, '--latency', '-s', script, options.url], { encoding: 'utf8' });
  const cpu = childrenCpuSeconds() - cpuBefore;
  rmSync(script, { force: true });
  const raw = `${run.stdout}${run.stderr}`;
  const ms = (text: string | undefined): number => {
    const match = /([\d.]+)(us|ms|s)/.exec(text ?? '');
    if (!match) return NaN;
    const value = Number(match[1]);
    return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
  };
  const counted = /(\d+) requests in ([\d.]+)(ms|s)/.exec(raw);
  const total = Number(counted?.[1] ?? 0);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(raw);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(raw)?.[1] ?? 0);
  if (run.status !== 0 || !counted) throw new Error(`wrk failed (exit ${run.status}):\n${raw}`);
  return {
    scenario: options.scenario,
    requestsPerSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(raw)?.[1] ?? NaN),
    p50: ms(/\s50%\s+(\S+)/.exec(raw)?.[1]),
    p99: ms(/\s99%\s+(\S+)/.exec(raw)?.[1]),
    errors: non2xx + (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
    total,
    non2xx,
    loaderCpuMsPerRequest: (cpu * 1000) / Math.max(1, total),
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

export function machine(): string {
  const cpuList = cpus();
  const model = cpuList[0]?.model ?? 'unknown CPU';
  return `${cpuList.length} × ${model}, ${(totalmem() / 2 ** 30).toFixed(0)} GB RAM (${(freemem() / 2 ** 30).toFixed(0)} GB free at start), ` +
    `${platform()} ${release()}, Node ${process.version}`;
}

/** The 1-minute load average: on a shared machine, other work competes for the same cores. */
export function loadAverage(): string {
  return loadavg()[0].toFixed(1);
}

export const fmt = (value: number, digits = 0): string =>
  Number.isFinite(value) ? value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : 'n/a';

/**
 * Replaces the text between `<!-- name:start -->` and `<!-- name:end -->` in a markdown file (creating the
 * file from `initial` when missing), so that hand-written analysis around the generated part survives.
 */
export function replaceSection(file: string, name: string, body: string, initial: string): void {
  const start = `<!-- ${name}:start -->`;
  const end = `<!-- ${name}:end -->`;
  let text = existsSync(file) ? readFileSync(file, 'utf8') : initial;
  if (!text.includes(start)) text = `${text.trimEnd()}\n\n${start}\n${end}\n`;
  const before = text.slice(0, text.indexOf(start) + start.length);
  const after = text.slice(text.indexOf(end));
  writeFileSync(file, `${before}\n${body.trim()}\n${after}`);
}

const escapeXml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A two-panel SVG: requests/s bars (left) and p50/p99 latency bars (right), per scenario. */
export function chartSvg(title: string, results: LoadResult[], yardstick: number): string {
  const rowHeight = 34;
  const top = 70;
  const labelWidth = Math.ceil(Math.max(...results.map((r) => r.scenario.length)) * 7) + 24;
  const panel = 340;
  const width = labelWidth + 2 * panel + 60;
  const height = top + results.length * rowHeight + 60;
  // bars use at most 75% of a panel, leaving room for their value labels
  const maxRps = Math.max(yardstick, ...results.map((r) => r.requestsPerSecond)) / 0.75;
  const maxLatency = Math.max(1, ...results.map((r) => r.p99)) / 0.7;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`);
  parts.push(`<rect width="100%" height="100%" fill="#ffffff"/>`);
  parts.push(`<text x="16" y="26" font-size="17" font-weight="bold">${escapeXml(title)}</text>`);
  const x1 = labelWidth;
  const x2 = labelWidth + panel + 40;
  parts.push(`<text x="${x1}" y="56" font-weight="bold">requests/s (dashed: yardstick)</text>`);
  parts.push(`<text x="${x2}" y="56" font-weight="bold">latency ms: p50 (dark), p99 (light)</text>`);
  results.forEach((r, i) => {
    const y = top + i * rowHeight;
    parts.push(`<text x="${labelWidth - 10}" y="${y + 17}" text-anchor="end">${escapeXml(r.scenario)}</text>`);
    const w = (r.requestsPerSecond / maxRps) * panel;
    parts.push(`<rect x="${x1}" y="${y + 4}" width="${w.toFixed(1)}" height="20" fill="#3b6ea8"/>`);
    parts.push(`<text x="${(x1 + w + 4).toFixed(1)}" y="${y + 19}">${fmt(r.requestsPerSecond)}</text>`);
    const w99 = (r.p99 / maxLatency) * panel;
    const w50 = (r.p50 / maxLatency) * panel;
    parts.push(`<rect x="${x2}" y="${y + 4}" width="${w99.toFixed(1)}" height="20" fill="#f0a35e"/>`);
    parts.push(`<rect x="${x2}" y="${y + 4}" width="${w50.toFixed(1)}" height="20" fill="#b85c00"/>`);
    parts.push(`<text x="${(x2 + w99 + 4).toFixed(1)}" y="${y + 19}">${fmt(r.p50, 1)} / ${fmt(r.p99, 1)}</text>`);
  });
  const yx = x1 + (yardstick / maxRps) * panel;
  parts.push(`<line x1="${yx.toFixed(1)}" y1="${top - 4}" x2="${yx.toFixed(1)}" y2="${top + results.length * rowHeight}" stroke="#444" stroke-dasharray="4 3"/>`);
  parts.push(`<text x="16" y="${height - 20}" fill="#555">50 connections; autocannon; load generator on the same machine as the services.</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Runs a bench's main when its file is the one node was started with: a failure is logged with its stack, exit 1. */
export function runIfMain(entry: NodeModule, main: () => Promise<void>): void {
  if (require.main !== entry) return;
  main().catch((error: unknown) => {
    log(`FAILED: ${error instanceof Error ? error.stack ?? error.message : String(error)}`);
    process.exit(1);
  });
}

import { spawn, type ChildProcess } from 'node:child_process';

export interface RunProcessOptions {
  /** Path of the node script to run (`node ...nodeArgs <script> ...args`). */
  script: string;
  args?: string[];
  /** Flags for node itself, before the script (`--max-semi-space-size=8`). */
  nodeArgs?: string[];
  /** Added to (or, with inheritEnv false, instead of) this process's environment; undefined removes a variable. */
  env?: Record<string, string | undefined>;
  inheritEnv?: boolean;
  cwd?: string;
  /** Ready when a GET of this URL answers 2xx. */
  readyUrl?: string;
  /** Ready when stdout or stderr shows this text or pattern. */
  readyLine?: string | RegExp;
  /** Bound on readiness (catches hangs only). Default 30000. */
  readyTimeoutMs?: number;
  /** stop(): SIGTERM, then SIGKILL after this long. Default 5000. */
  stopTimeoutMs?: number;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningProcess {
  readonly pid: number;
  /** stdout and stderr interleaved as received. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first output line matching, waiting up to timeoutMs for it. */
  waitForOutput(pattern: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Settles when the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** Null while running. */
  exitStatus(): ProcessExit | null;
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after stopTimeoutMs; resolves with how it ended. */
  stop(): Promise<ProcessExit>;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Whatever the test does, no child outlives the test process. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

function matches(line: string, pattern: string | RegExp): boolean {
  return typeof pattern === 'string' ? line.includes(pattern) : pattern.test(line);
}

/**
 * Starts `node <script>` as a separate process, waits until it is ready (HTTP URL or log line),
 * captures its output for assertions. Throws, with the captured output, when it exits or does not
 * become ready in time (and then it is killed).
 */
export async function runProcess(options: RunProcessOptions): Promise<RunningProcess> {
  installExitHook();
  const env: Record<string, string> = {};
  const merged = { ...(options.inheritEnv === false ? {} : process.env), ...options.env };
  for (const [key, value] of Object.entries(merged)) if (value !== undefined) env[key] = value;

  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script, ...(options.args ?? [])], {
    cwd: options.cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);

  let all = '';
  let out = '';
  let err = '';
  const lineWaiters = new Set<{ pattern: string | RegExp; resolve(line: string): void }>();
  const partial = { stdout: '', stderr: '' };
  const onChunk = (stream: 'stdout' | 'stderr', chunk: Buffer): void => {
    const text = chunk.toString('utf8');
    all += text;
    if (stream === 'stdout') out += text;
    else err += text;
    const lines = (partial[stream] + text).split('\n');
    partial[stream] = lines.pop() ?? '';
    for (const line of lines) {
      for (const waiter of [...lineWaiters]) {
        if (matches(line, waiter.pattern)) {
          lineWaiters.delete(waiter);
          waiter.resolve(line);
        }
      }
    }
  };
  child.stdout!.on('data', (chunk: Buffer) => onChunk('stdout', chunk));
  child.stderr!.on('data', (chunk: Buffer) => onChunk('stderr', chunk));

  let status: ProcessExit | null = null;
  const exited = new Promise<ProcessExit>((resolve) => {
    // 'close', not 'exit': 'exit' can come before the last of the child's output has been read, and a
    // test that reads the output once the process ended must see all of it.
    child.once('close', (code, signal) => {
      status = { code, signal };
      running.delete(child);
      resolve(status);
    });
    child.once('error', () => {
      status ??= { code: null, signal: null };
      running.delete(child);
      resolve(status);
    });
  });

  const existingLine = (pattern: string | RegExp): string | undefined =>
    all.split('\n').find((line) => matches(line, pattern));

  const waitForOutput = (pattern: string | RegExp, timeoutMs = 10_000): Promise<string> => {
    const seen = existingLine(pattern);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        pattern,
        resolve: (line: string) => {
          clearTimeout(timer);
          resolve(line);
        },
      };
      const timer = setTimeout(() => {
        lineWaiters.delete(waiter);
        // A last line without its newline yet still counts.
        const tail = [partial.stdout, partial.stderr].find((line) => matches(line, pattern));
        if (tail !== undefined) resolve(tail);
        else reject(new Error(`no output matching ${String(pattern)} within ${timeoutMs} ms; output:\n${all}`));
      }, timeoutMs);
      lineWaiters.add(waiter);
    });
  };

  const stopTimeoutMs = options.stopTimeoutMs ?? 5000;
  const stop = async (): Promise<ProcessExit> => {
    if (status) return status;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  const handle: RunningProcess = {
    pid: child.pid ?? -1,
    output: () => all,
    stdout: () => out,
    stderr: () => err,
    waitForOutput,
    exited,
    exitStatus: () => status,
    kill: (signal: NodeJS.Signals = 'SIGTERM') => {
      child.kill(signal);
    },
    stop,
  };

  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  try {
    await waitUntilReady(options, readyTimeoutMs, exited, waitForOutput);
  } catch (error) {
    const ended = handle.exitStatus();
    const how = ended ? `exited (code ${ended.code}, signal ${ended.signal})` : 'was stopped';
    await stop();
    throw new Error(`${options.script} did not become ready: ${(error as Error).message}; it ${how}. Output:\n${all}`);
  }
  return handle;
}

async function waitUntilReady(
  options: RunProcessOptions,
  timeoutMs: number,
  exited: Promise<ProcessExit>,
  waitForOutput: (pattern: string | RegExp, timeoutMs?: number) => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitedEarly = false;
  const exitGuard = exited.then(() => {
    exitedEarly = true;
    throw new Error('process exited before it was ready');
  });
  exitGuard.catch(() => undefined);

  if (options.readyLine !== undefined) {
    await Promise.race([waitForOutput(options.readyLine, timeoutMs), exitGuard]);
  }
  if (options.readyUrl !== undefined) {
    let last = 'no answer';
    for (;;) {
      if (exitedEarly) throw new Error('process exited before it was ready');
      try {
        const response = await fetch(options.readyUrl, { signal: AbortSignal.timeout(2000) });
        await response.arrayBuffer();
        if (response.ok) return;
        last = `HTTP ${response.status}`;
      } catch (error) {
        last = (error as Error).message;
      }
      if (Date.now() >= deadline) throw new Error(`${options.readyUrl} not ready within ${timeoutMs} ms (last: ${last})`);
      await Promise.race([new Promise((resolve) => setTimeout(resolve, 100)), exitGuard]);
    }
  }
}

export interface CommandResult { code: number | null; stdout: string; stderr: string }

/**
 * Runs a command to its end and returns its exit code and output. Detached: a session of its own, without the
 * controlling terminal of whoever runs the tests, as in a script, so that no prompt can wait on that terminal.
 */
export function runToEnd(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<CommandResult> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Server processes (redis-server, rabbitmq-server, mariadbd) a cluster test starts on loopback ports
 * of its own and must stop: every one is SIGKILLed when the test process exits, whatever happened.
 */
export interface Daemon {
  readonly name: string;
  readonly pid: number;
  output(): string;
  readonly exited: Promise<void>;
  isRunning(): boolean;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

const alive = new Set<ChildProcess>();
let hooked = false;

export function startDaemon(name: string, command: string, args: readonly string[], env: Record<string, string> = {}): Daemon {
  if (!hooked) {
    hooked = true;
    process.on('exit', () => {
      for (const child of alive) {
        try {
          // A whole process group: rabbitmq-server's shell script starts beam.smp, epmd and friends.
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }
    });
  }
  const child = spawn(command, [...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  alive.add(child);
  let output = '';
  const keep = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let running = true;
  const exited = new Promise<void>((resolve) => {
    child.on('exit', () => {
      running = false;
      alive.delete(child);
      resolve();
    });
    child.on('error', (err) => {
      output += `\nspawn failed: ${err.message}`;
      running = false;
      alive.delete(child);
      resolve();
    });
  });
  return {
    name,
    pid: child.pid ?? -1,
    output: () => output,
    exited,
    isRunning: () => running,
    async kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (!running) return;
      try {
        process.kill(-child.pid!, signal);
      } catch {
        child.kill(signal);
      }
      await exited;
    },
  };
}

/** Fails the test, saying what to install, when a server binary is missing. */
export function requireBinary(path: string, install: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: ${install} (and add it to APT_PACKAGES in .ci/run)`);
}

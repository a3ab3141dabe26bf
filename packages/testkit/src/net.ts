import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A port that was free a moment ago on 127.0.0.1 (bind it soon), never one this process handed out before.
 * Chosen below the kernel's ephemeral range: a port the OS picks for listen(0) comes from that range, and once
 * closed it can be given to an outgoing connection (a service's own call to another) before the server meant
 * to bind it starts, which failed a CI run with EADDRINUSE.
 */
export async function freePort(): Promise<number> {
  const [low, high] = portRange();
  for (let attempt = 0; attempt < 500; attempt += 1) {
    const port = low + Math.floor(Math.random() * (high - low));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port on 127.0.0.1 between ${low} and ${high} after 500 tries`);
}

const handedOut = new Set<number>();

/** From 20000 to just below the ephemeral range (/proc/sys/net/ipv4/ip_local_port_range; Linux's default starts at 32768). */
function portRange(): [number, number] {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch { /* not Linux: keep the default */ }
  const low = 20000;
  return [low, Math.max(low + 1000, ephemeralLow)];
}

function canListen(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

export interface WaitForOptions {
  /** Give up after this long (a bound that only catches hangs). Default 10000. */
  timeoutMs?: number;
  /** Poll period. Default 50. */
  intervalMs?: number;
  /** Named in the timeout error. */
  description?: string;
}

/**
 * Polls until the predicate returns a truthy value (or a promise of one) and returns it.
 * A predicate that throws counts as "not yet"; the last error is quoted on timeout.
 */
export async function waitFor<T>(predicate: () => T | Promise<T>, options: WaitForOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const intervalMs = options.intervalMs ?? 50;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await predicate();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const what = options.description ?? 'condition';
      const why = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`waitFor: ${what} not met within ${timeoutMs} ms${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** True when something accepts a TCP connection on host:port within timeoutMs. */
export function canConnect(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

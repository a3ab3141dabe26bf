import { Redis } from 'ioredis';
import { waitFor } from '@vanish/testkit/net';
import { requireBinary, startDaemon, type Daemon } from './daemons';

/** Asks one node over a short-lived connection that never retries (a dead node fails the call at once). */
export async function askRedis<T>(port: number, ask: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
  try {
    await redis.connect();
    return await ask(redis);
  } finally {
    redis.disconnect();
  }
}

/**
 * One Debian redis-server on a loopback port of the test's own, without persistence (limiter counters)
 * and with diskless replica syncs that start at once. Resolves once it answers and `ready` (asked
 * of a fresh connection to it) says so.
 */
export async function startRedisServer(dir: string, port: number, extraArgs: readonly string[] = [], ready: (probe: Redis) => Promise<boolean> = async () => true): Promise<Daemon> {
  requireBinary('/usr/bin/redis-server', 'apt-get install -y redis-server');
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir,
    '--dbfilename', `dump-${port}.rdb`, '--repl-diskless-sync', 'yes', '--repl-diskless-sync-delay', '0', ...extraArgs];
  const daemon = startDaemon(`redis-${port}`, '/usr/bin/redis-server', args);
  try {
    await waitFor(async () => {
      if (!daemon.isRunning()) throw new Error(`redis-server exited: ${daemon.output().slice(-1500)}`);
      return askRedis(port, ready);
    }, { timeoutMs: 30_000, intervalMs: 100, description: `redis on ${port}` });
  } catch (err) {
    await daemon.kill('SIGKILL');
    throw err;
  }
  return daemon;
}

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { canConnect, freePort, waitFor } from './net';
import type { IssuedCertificate } from './tls';

/**
 * Servers of our own with TLS listeners, on loopback ports of our own, in temp directories: never
 * the machine's shared MariaDB, Redis or RabbitMQ. Each starter resolves once the TLS port accepts
 * connections; stop() ends the process group it started and deletes the directory.
 */
export interface TlsServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly dir: string;
  /** The server's own log, for failure messages. */
  log(): string;
  stop(): Promise<void>;
}

export interface TlsServerOptions {
  /** PEM file of the CA the server presents a chain to (and trusts). */
  caFile: string;
  certificate: IssuedCertificate;
  /** Bound on the start (catches hangs only). */
  startTimeoutMs?: number;
  /** More server options (startTlsRedis only): e.g. cluster mode. */
  serverArgs?: readonly string[];
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

function launch(command: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): ChildProcess {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => { for (const child of running) killGroup(child, 'SIGKILL'); });
  }
  const child = spawn(command, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const append = (chunk: Buffer) => { try { writeFileSync(logFile, chunk, { flag: 'a' }); } catch { /* dir removed */ } };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

async function waitForPort(child: ChildProcess, port: number, timeoutMs: number, what: string, log: () => string): Promise<void> {
  try {
    await waitFor(async () => {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode})`);
      return canConnect('127.0.0.1', port, 500);
    }, { timeoutMs, intervalMs: 200, description: `${what} listening on ${port}` });
  } catch (err) {
    killGroup(child, 'SIGKILL');
    throw new Error(`${(err as Error).message}\n--- ${what} log ---\n${log().slice(-4000)}`);
  }
}

function stopper(child: ChildProcess, dir: string, afterStop?: () => void): () => Promise<void> {
  return async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      killGroup(child, 'SIGTERM');
      const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    afterStop?.();
    rmSync(dir, { recursive: true, force: true });
  };
}

const readLog = (file: string) => () => { try { return readFileSync(file, 'utf8'); } catch { return ''; } };

export interface TlsMariaDb extends TlsServer {
  /** User `vanish`, password `vanish`, all privileges on database `vanish` (made through the socket). */
  readonly user: string;
  readonly password: string;
  readonly database: string;
}

/**
 * mariadbd with `--ssl-ca/--ssl-cert/--ssl-key` and `--require-secure-transport` (a plaintext
 * client is refused by the server itself), its own datadir from mariadb-install-db and its own
 * socket, through which the user and database of the tests are made.
 */
export async function startTlsMariaDb(options: TlsServerOptions): Promise<TlsMariaDb> {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-mariadb-tls-'));
  const dataDir = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  execFileSync('mariadb-install-db', [
    '--no-defaults', `--datadir=${dataDir}`, '--user=root', '--auth-root-authentication-method=normal', '--skip-test-db',
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  const port = await freePort();
  const child = launch('mariadbd', [
    '--no-defaults', `--datadir=${dataDir}`, `--socket=${join(dir, 'mysqld.sock')}`, `--pid-file=${join(dir, 'mysqld.pid')}`,
    `--port=${port}`, '--bind-address=127.0.0.1', '--user=root', '--skip-log-bin', '--innodb-buffer-pool-size=16M',
    `--ssl-ca=${options.caFile}`, `--ssl-cert=${options.certificate.certFile}`, `--ssl-key=${options.certificate.keyFile}`,
    '--require-secure-transport=ON', `--log-error=${logFile}`,
  ], process.env, logFile);
  await waitForPort(child, port, options.startTimeoutMs ?? 60_000, 'mariadbd', readLog(logFile));
  const stop = stopper(child, dir);
  try {
    const admin = await mysql.createConnection({ socketPath: join(dir, 'mysqld.sock'), user: 'root', password: '' });
    try {
      await admin.query('CREATE DATABASE vanish CHARACTER SET utf8mb4 COLLATE utf8mb4_bin');
      await admin.query("CREATE USER 'vanish'@'%' IDENTIFIED BY 'vanish'");
      await admin.query("GRANT ALL PRIVILEGES ON vanish.* TO 'vanish'@'%'");
    } finally {
      await admin.end();
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { host: '127.0.0.1', port, dir, log: readLog(logFile), stop, user: 'vanish', password: 'vanish', database: 'vanish' };
}

/** redis-server with only a TLS port (`--port 0 --tls-port`), no client certificates, no persistence. */
export async function startTlsRedis(options: TlsServerOptions): Promise<TlsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-redis-tls-'));
  const logFile = join(dir, 'server.log');
  const port = await freePort();
  const child = launch('redis-server', [
    '--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1',
    '--tls-cert-file', options.certificate.certFile, '--tls-key-file', options.certificate.keyFile, '--tls-ca-cert-file', options.caFile,
    '--tls-auth-clients', 'no', '--save', '', '--appendonly', 'no', '--dir', dir, ...(options.serverArgs ?? []),
  ], process.env, logFile);
  await waitForPort(child, port, options.startTimeoutMs ?? 30_000, 'redis-server', readLog(logFile));
  return { host: '127.0.0.1', port, dir, log: readLog(logFile), stop: stopper(child, dir) };
}

const RABBITMQ_BIN = '/usr/lib/rabbitmq/bin';

/**
 * A RabbitMQ node of its own (`vanish-tls-<port>@localhost`) with an SSL listener only
 * (`listeners.tcp = none`), a private epmd, its own distribution port and Erlang cookie, and no
 * plugins. guest/guest may connect from loopback. Slow (10–30 s here): one per test file.
 */
export async function startTlsRabbitMq(options: TlsServerOptions): Promise<TlsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-rabbitmq-tls-'));
  const logFile = join(dir, 'server.log');
  const [port, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  mkdirSync(join(dir, 'home'));
  writeFileSync(join(dir, 'home', '.erlang.cookie'), `VANISHTLS${port}`, { mode: 0o400 });
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  writeFileSync(join(dir, 'rabbitmq.conf'), [
    'listeners.tcp = none',
    `listeners.ssl.default = 127.0.0.1:${port}`,
    `ssl_options.cacertfile = ${options.caFile}`,
    `ssl_options.certfile = ${options.certificate.certFile}`,
    `ssl_options.keyfile = ${options.certificate.keyFile}`,
    'ssl_options.verify = verify_none',
    'ssl_options.fail_if_no_peer_cert = false',
    // RabbitMQ closes a TLS handshake not finished in 5 s: on a CI machine busy with the other suites that
    // cut a client's handshake once ("socket disconnected before secure TLS connection was established").
    'ssl_handshake_timeout = 30000',
    'log.console = true',
    'log.file = false',
  ].join('\n') + '\n');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: join(dir, 'home'),
    RABBITMQ_NODENAME: `vanish-tls-${port}@localhost`,
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_DIST_PORT: String(distPort),
    ERL_EPMD_PORT: String(epmdPort),
  };
  const child = launch(join(RABBITMQ_BIN, 'rabbitmq-server'), [], env, logFile);
  const stopEpmd = () => {
    try {
      execFileSync('epmd', ['-kill'], { env: { ...process.env, ERL_EPMD_PORT: String(epmdPort) }, stdio: 'ignore', timeout: 5_000 });
    } catch {
      // not running
    }
  };
  try {
    await waitForPort(child, port, options.startTimeoutMs ?? 120_000, 'rabbitmq-server', readLog(logFile));
  } catch (err) {
    stopEpmd();
    throw err;
  }
  return { host: '127.0.0.1', port, dir, log: readLog(logFile), stop: stopper(child, dir, stopEpmd) };
}

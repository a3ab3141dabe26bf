// The compose profile `public` (Caddy in front of the gateway, automatic HTTPS), proven without the
// internet: Debian's `pebble` (Let's Encrypt's ACME test server) is the CA, a DNS responder in this
// test sends pebble's validation to Caddy on loopback, and Debian's `caddy` runs the repository's own
// site file (deploy/compose/caddy/vanish.caddy) in front of a running all-in-one. Then a create and a
// metadata read go through Caddy over HTTPS, and the rate limits count the caller, not Caddy.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, waitFor } from '@vanish/testkit/net';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { createTestCa, type TestCertificateAuthority } from '@vanish/testkit/tls';
import { CLEARED_ENV } from '../support/api-client';

const ROOT = path.resolve(__dirname, '..', '..');
const MAIN = path.join(ROOT, 'services', 'all-in-one', 'dist', 'main.js');
const SITE_FILE = path.join(ROOT, 'deploy', 'compose', 'caddy', 'vanish.caddy');
const HOST = 'vanish.test';

jest.setTimeout(180_000);

function requireCommand(command: string, pkg: string): void {
  if (spawnSync(command, ['version'], { stdio: 'ignore' }).error) {
    throw new Error(`${command} is not installed: apt-get install -y --no-install-recommends ${pkg} (.ci/run installs it)`);
  }
}

/**
 * Answers every A query with 127.0.0.1 and anything else with no records: pebble resolves the
 * name it validates through this (its -dnsserver), so its HTTP-01 / TLS-ALPN-01 checks reach Caddy.
 */
function startLoopbackDns(port: number): Promise<UdpSocket> {
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (query.length < 12) return;
    let offset = 12;
    while (offset < query.length && query[offset] !== 0) offset += query[offset]! + 1;
    const questionEnd = offset + 5;
    if (questionEnd > query.length) return;
    const type = query.readUInt16BE(offset + 1);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2);
    header.writeUInt16BE(0x8180 | (query.readUInt16BE(2) & 0x0100), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(type === 1 ? 1 : 0, 6);
    const question = query.subarray(12, questionEnd);
    const answer = type === 1 ? Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1]) : Buffer.alloc(0);
    socket.send(Buffer.concat([header, question, answer]), peer.port, peer.address);
  });
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, '127.0.0.1', () => resolve(socket));
  });
}

interface Daemon {
  child: ChildProcess;
  output: () => string;
}

function startDaemon(command: string, args: string[], env: Record<string, string>): Daemon {
  const child = spawn(command, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString('utf8'); });
  return { child, output: () => output };
}

async function stopDaemon(daemon: Daemon | undefined): Promise<void> {
  if (!daemon || daemon.child.exitCode !== null || daemon.child.signalCode !== null) return;
  const exited = new Promise((resolve) => daemon.child.once('exit', resolve));
  daemon.child.kill('SIGTERM');
  const timer = setTimeout(() => daemon.child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function call(options: { port: number; method: string; path: string; body?: unknown; ca?: string; localAddress: string; headers?: Record<string, string>; tls: boolean }): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const make = options.tls ? httpsRequest : httpRequest;
    const req = make({
      host: '127.0.0.1', port: options.port, method: options.method, path: options.path, localAddress: options.localAddress,
      servername: HOST, ca: options.ca, agent: false, timeout: 20_000,
      headers: { Host: `${HOST}:${options.port}`, ...(payload ? { 'Content-Type': 'application/json' } : {}), ...options.headers },
    }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`${options.method} ${options.path}: no answer within 20 s`)));
    req.on('error', reject);
    req.end(payload);
  });
}

function httpsGet(url: string, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca, agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { body += chunk; });
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: no answer`)));
    req.on('error', reject);
    req.end();
  });
}

describe('a public host: Caddy with a Pebble-issued certificate in front of vanish', () => {
  let dir: string;
  let listenerCa: TestCertificateAuthority;
  let dns: UdpSocket | undefined;
  let pebble: Daemon | undefined;
  let caddy: Daemon | undefined;
  let app: RunningProcess | undefined;
  let caddyHttps: number;
  let gatewayPort: number;
  let acmeRoot: string;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
    requireCommand('pebble', 'pebble');
    requireCommand('caddy', 'caddy');
    dir = mkdtempSync(path.join(tmpdir(), 'vanish-public-edge-'));
    listenerCa = createTestCa('pebble listener CA');
    const pebbleListener = listenerCa.issue('pebble', { ip: ['127.0.0.1'], dns: ['localhost'] });

    const [dnsPort, acmePort, managementPort, caddyHttp] = [await freePort(), await freePort(), await freePort(), await freePort()];
    caddyHttps = await freePort();
    dns = await startLoopbackDns(dnsPort);

    writeFileSync(path.join(dir, 'pebble.json'), JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${acmePort}`, managementListenAddress: `127.0.0.1:${managementPort}`,
        certificate: pebbleListener.certFile, privateKey: pebbleListener.keyFile,
        httpPort: caddyHttp, tlsPort: caddyHttps, ocspResponderURL: '', externalAccountBindingRequired: false,
      },
    }));
    // NOSLEEP: no random validation delays; NONCEREJECT=0: no deliberately refused nonces (both test aids of pebble's).
    pebble = startDaemon('pebble', ['-config', path.join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], {
      PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0',
    });
    await waitFor(() => httpsGet(`https://127.0.0.1:${acmePort}/dir`, listenerCa.ca).then(() => true, () => false), { timeoutMs: 30_000 })
      .catch((err: Error) => { throw new Error(`pebble did not start: ${err.message}\n${pebble?.output()}`); });
    acmeRoot = await httpsGet(`https://127.0.0.1:${managementPort}/roots/0`, listenerCa.ca);

    const ports: Record<string, string> = {};
    for (const name of ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT']) ports[name] = String(await freePort());
    gatewayPort = Number(ports.PORT);
    app = await runProcess({
      script: MAIN,
      env: {
        ...CLEARED_ENV, ...ports, HOST: '127.0.0.1', DATA_DIR: path.join(dir, 'data'), LOG_LEVEL: 'info',
        PUBLIC_BASE_URL: `https://${HOST}:${caddyHttps}`, REQUIRE_HTTPS: 'true',
        // The gateway believes X-Forwarded-For and -Proto from Caddy's address only; callers use 127.0.0.2 and up.
        TRUST_PROXY: '127.0.0.1', RATE_LIMIT_CREATE_PER_HOUR: '2',
      },
      readyLine: 'all-in-one ready',
      readyTimeoutMs: 90_000,
      stopTimeoutMs: 30_000,
    });

    writeFileSync(path.join(dir, 'acme-listener-ca.pem'), listenerCa.ca);
    writeFileSync(path.join(dir, 'Caddyfile'), [
      '{',
      '\tadmin off',
      `\thttp_port ${caddyHttp}`,
      `\thttps_port ${caddyHttps}`,
      '\tdefault_bind 127.0.0.1',
      `\tacme_ca https://127.0.0.1:${acmePort}/dir`,
      `\tacme_ca_root ${path.join(dir, 'acme-listener-ca.pem')}`,
      `\tstorage file_system ${path.join(dir, 'caddy-data')}`,
      '\tskip_install_trust',
      '}',
      '',
      `import ${SITE_FILE}`,
      '',
    ].join('\n'));
    caddy = startDaemon('caddy', ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
      HOME: dir, XDG_DATA_HOME: path.join(dir, 'xdg-data'), XDG_CONFIG_HOME: path.join(dir, 'xdg-config'),
      VANISH_PUBLIC_HOST: `${HOST}:${caddyHttps}`, VANISH_GATEWAY_ADDRESS: `127.0.0.1:${gatewayPort}`,
    });
    await waitFor(() => (/certificate obtained successfully/.test(caddy!.output()) ? true : caddy!.child.exitCode !== null ? true : undefined), { timeoutMs: 120_000 })
      .catch((err: Error) => { throw new Error(`caddy obtained no certificate: ${err.message}\n${caddy?.output()}\n--- pebble\n${pebble?.output()}`); });
    if (caddy.child.exitCode !== null) throw new Error(`caddy exited:\n${caddy.output()}`);
  });

  afterAll(async () => {
    await stopDaemon(caddy);
    await app?.stop();
    await stopDaemon(pebble);
    dns?.close();
    listenerCa?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('when a note is created and its metadata read through Caddy over HTTPS, then both answer 200 and Caddy presents the Pebble-issued certificate', async () => {
    const created = await call({ tls: true, ca: acmeRoot, port: caddyHttps, localAddress: '127.0.0.2', method: 'POST', path: '/api/create.php', body: { content: 'through the public edge' } });
    expect({ status: created.status, body: created.body }).toEqual({ status: 200, body: expect.stringContaining('"success":true') });
    const { uuid, url } = JSON.parse(created.body) as { uuid: string; url: string };
    expect(url).toBe(`https://${HOST}:${caddyHttps}/${uuid}`);
    expect(created.headers['strict-transport-security']).toMatch(/max-age=/);
    expect(created.headers['x-xss-protection']).toBe('0');
    expect(created.headers.server).toBeUndefined();

    const metadata = await call({ tls: true, ca: acmeRoot, port: caddyHttps, localAddress: '127.0.0.2', method: 'GET', path: `/api/view/${uuid}.php` });
    expect(metadata.status).toBe(200);
    expect(JSON.parse(metadata.body)).toMatchObject({ success: true, note: { uuid, max_views: 1, current_views: 0, is_destroyed: false } });
    // Trusting only Pebble's root (not the listener CA, not the system's): the chain Caddy serves is Pebble's.
    expect(caddy!.output()).toMatch(/certificate obtained successfully[^\n]*vanish\.test/);
    // Pebble validated the challenge against Caddy (through the DNS responder), it did not wave it through.
    expect(pebble!.output()).toMatch(/authz \S+ set VALID by completed challenge/);
  });

  it('when callers come through Caddy, then the limits count each caller (not Caddy), and a forged X-Forwarded-For changes nothing', async () => {
    const create = (localAddress: string, headers: Record<string, string> = {}) =>
      call({ tls: true, ca: acmeRoot, port: caddyHttps, localAddress, headers, method: 'POST', path: '/api/create.php', body: { content: 'x' } });
    // 127.0.0.3 has its own budget of 2 creates per hour.
    expect((await create('127.0.0.3')).status).toBe(200);
    expect((await create('127.0.0.3', { 'X-Forwarded-For': '198.51.100.7' })).status).toBe(200);
    const limited = await create('127.0.0.3', { 'X-Forwarded-For': '198.51.100.8' });
    expect(limited.status).toBe(429);
    expect(limited.headers['ratelimit-limit']).toBe('2');
    // Another caller through the same Caddy is not limited by 127.0.0.3's use.
    expect((await create('127.0.0.4')).status).toBe(200);
    // Straight to the gateway, a caller is not Caddy: its X-Forwarded-For is not believed, nor its claim of HTTPS.
    const direct = await call({ tls: false, port: gatewayPort, localAddress: '127.0.0.5', method: 'POST', path: '/api/create.php', body: { content: 'x' }, headers: { 'X-Forwarded-For': '127.0.0.9', 'X-Forwarded-Proto': 'https' } });
    expect(direct.status).toBe(400);
    expect(JSON.parse(direct.body)).toMatchObject({ code: 'HTTPS_REQUIRED' });
  });
});

import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { keyCheck, newKey, seal } from '@vanish/envelope';
import { freePort } from '@vanish/testkit/net';
import { npmStartNodeFlags } from '@vanish/testkit/npm-start';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { callApi, CLEARED_ENV } from './support/api-client';
import { startReceiver, verifySignature } from '../services/webhooks/test/support/receiver';

// `npm start` runs `npm run build && node <flags> services/all-in-one/dist/main.js`: this runs the second half,
// with the flags read from package.json (the e2e project needs `npm run build` first, which `npm test` does).
const MAIN = path.resolve(__dirname, '..', 'services', 'all-in-one', 'dist', 'main.js');
const NPM_START_NODE_ARGS = npmStartNodeFlags(path.resolve(__dirname, '..'));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

jest.setTimeout(90_000);

/**
 * The addresses this host's TCP sockets listen on, by port, from the kernel's own table (Linux):
 * exact, unlike probing from outside, which needs a second address of this host to probe from.
 */
function listeningAddresses(): Map<number, string[]> {
  const byPort = new Map<number, string[]>();
  for (const [file, decode] of [['/proc/net/tcp', ipv4FromHex], ['/proc/net/tcp6', ipv6FromHex]] as const) {
    if (!existsSync(file)) throw new Error(`${file} is missing: this test reads the kernel's socket table (Linux /proc)`);
    for (const line of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const [, local = '', , state] = line.trim().split(/\s+/);
      if (state !== '0A') continue; // TCP_LISTEN
      const [addressHex = '', portHex = ''] = local.split(':');
      const port = parseInt(portHex, 16);
      byPort.set(port, [...(byPort.get(port) ?? []), decode(addressHex)]);
    }
  }
  return byPort;
}

/**
 * Every TCP socket of this host that is not listening and has `port` at either end (established,
 * closing, in TIME_WAIT: a loopback connection stays in the table for a minute after it closed).
 */
function socketsOnPort(port: number): string[] {
  const found: string[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) throw new Error(`${file} is missing: this test reads the kernel's socket table (Linux /proc)`);
    for (const line of readFileSync(file, 'utf8').trim().split('\n').slice(1)) {
      const [, local = '', remote = '', state] = line.trim().split(/\s+/);
      if (state === '0A') continue; // TCP_LISTEN
      const ends = [local, remote].map((end) => parseInt(end.split(':')[1] ?? '', 16));
      if (ends.includes(port)) found.push(`${file} ${local} ${remote}`);
    }
  }
  return found;
}

/** /proc/net/tcp writes an IPv4 address as one little-endian 32-bit word. */
function ipv4FromHex(hex: string): string {
  return (hex.match(/../g) ?? []).reverse().map((byte) => parseInt(byte, 16)).join('.');
}

/** /proc/net/tcp6 writes four little-endian 32-bit words; only the two listen-anywhere forms matter here. */
function ipv6FromHex(hex: string): string {
  if (/^0+$/.test(hex)) return '::';
  if (hex === '00000000000000000000000001000000') return '::1';
  return `ipv6:${hex}`;
}

async function portsEnv(): Promise<Record<string, string>> {
  const names = ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT'];
  const env: Record<string, string> = {};
  for (const name of names) env[name] = String(await freePort());
  return env;
}

describe('npm start (all-in-one) in an empty data directory', () => {
  let dataDir: string;
  let ports: Record<string, string>;
  let app: RunningProcess | undefined;
  let gateway: string;

  const start = () =>
    runProcess({
      script: MAIN,
      nodeArgs: NPM_START_NODE_ARGS,
      // HOST=0.0.0.0 as someone exposing the app on a network would set it: only the gateway follows it.
      // WEBHOOK_ALLOW_PRIVATE_NETWORKS: the test's webhook receiver listens on loopback.
      env: { ...CLEARED_ENV, ...ports, HOST: '0.0.0.0', DATA_DIR: dataDir, PUBLIC_BASE_URL: gateway, LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' },
      readyLine: 'all-in-one ready',
      readyTimeoutMs: 60_000,
      stopTimeoutMs: 30_000,
    });

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
    dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-all-in-one-'));
    ports = await portsEnv();
    gateway = `http://127.0.0.1:${ports.PORT}`;
    app = await start();
  });

  afterAll(async () => {
    await app?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  let created: { uuid: string; url: string };

  it('when started with HOST=0.0.0.0, then the gateway\'s public port listens there and notes, stats, mailer and every admin port on 127.0.0.1 only', () => {
    const listening = listeningAddresses();
    const internal = ['ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT'];
    expect({ PORT: listening.get(Number(ports.PORT)) }).toEqual({ PORT: ['0.0.0.0'] });
    for (const name of internal) expect({ [name]: listening.get(Number(ports[name])) }).toEqual({ [name]: ['127.0.0.1'] });
  });

  it('when a note is created through the gateway port, then the answer carries its uuid and link', async () => {
    const response = await callApi(gateway, 'POST', '/api/create.php', { content: 'hello from the e2e test', max_views: 2 });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ success: true, max_views: 2, has_passcode: false });
    expect(response.body.uuid).toMatch(UUID);
    expect(response.body.url).toBe(`${gateway}/${response.body.uuid}`);
    created = response.body;
  });

  it('when its metadata is read through the gateway port, then it shows the note unread, and reading it twice changes nothing', async () => {
    for (let i = 0; i < 2; i++) {
      const response = await callApi(gateway, 'GET', `/api/view/${created.uuid}.php`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        success: true,
        note: { uuid: created.uuid, has_passcode: false, expiry_type: 'view', max_views: 2, current_views: 0, is_destroyed: false },
      });
    }
  });

  it('when an unknown note is read, then the answer is 404', async () => {
    const response = await callApi(gateway, 'GET', '/api/view/0b6d2f8e-3c1a-4d5e-9f7a-1b2c3d4e5f60.php');
    expect(response.status).toBe(404);
  });

  it('when running, then each service keeps its own SQLite file in DATA_DIR, and no file there holds the content or the uuid', () => {
    expect(readdirSync(dataDir)).toEqual(expect.arrayContaining(['notes.db', 'stats.db', 'mailer.db', 'webhooks.db']));
    const everyFile = readdirSync(dataDir, { recursive: true, encoding: 'utf8' })
      .map((name) => path.join(dataDir, name))
      .filter((file) => statSync(file).isFile());
    for (const file of everyFile) {
      const bytes = readFileSync(file);
      expect({ file, content: bytes.includes('hello from the e2e test') }).toEqual({ file, content: false });
      expect({ file, uuid: bytes.includes(created.uuid) }).toEqual({ file, uuid: false });
    }
  });

  it('when a note is created with send_link_email, then its mailer writes the e-mail, sealed on the way to the mailer\'s key generated in DATA_DIR', async () => {
    const response = await callApi(gateway, 'POST', '/api/create.php', { content: 'mailed note', send_link_email: 'friend@example.com' });
    expect(response.status).toBe(200);
    const outbox = path.join(dataDir, 'outbox');
    const emlWithLink = () => (existsSync(outbox) ? readdirSync(outbox) : [])
      .map((name) => readFileSync(path.join(outbox, name), 'utf8').replace(/=\r?\n/g, ''))
      .find((text) => text.includes(response.body.url));
    for (let i = 0; i < 100 && !emlWithLink(); i++) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(emlWithLink()).toBeDefined();
    // DECISIONS 1: private rings (the mailer's, the webhooks service's) and the receipt signing ring; no symmetric ring shared with notes.
    expect(readdirSync(path.join(dataDir, 'keys')).sort())
      .toEqual(['limiter_key.txt', 'lookup_key.txt', 'mail_private_keys.txt', 'master_keys.txt', 'receipt_signing_keys.txt', 'webhook_private_keys.txt']);
    expect(readFileSync(path.join(dataDir, 'notes.db')).includes(response.body.uuid)).toBe(false);
  });

  it('when a note with a webhook_url is read, then the in-process webhooks service delivers note.accessed and note.destroyed, signed', async () => {
    const receiver = await startReceiver();
    try {
      const response = await callApi(gateway, 'POST', '/api/create.php', { content: 'hooked note', webhook_url: receiver.url('/hook') });
      expect(response.status).toBe(200);
      const page = await (await fetch(`${gateway}/${response.body.uuid}`)).text();
      const token = /name="form_token" value="([^"]+)"/.exec(page)![1]!;
      const reveal = await fetch(`${gateway}/${response.body.uuid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', 'user-agent': 'e2e-reader' },
        body: new URLSearchParams({ form_token: token }).toString(),
      });
      expect(reveal.status).toBe(200);
      for (let i = 0; i < 150 && receiver.received.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 200));
      expect(receiver.received.map((r) => r.payload.event).sort()).toEqual(['note.accessed', 'note.destroyed']);
      for (const r of receiver.received) {
        expect(verifySignature(response.body.webhook_secret, r)).toBe(true);
        expect(r.payload.data).toMatchObject({ note_id: response.body.uuid, note_ref: response.body.note_ref, access_details: { user_agent: 'e2e-reader' } });
      }
    } finally {
      await receiver.close();
    }
  });

  it('when a file is uploaded and downloaded through the gateway port, then the bytes are the same, a PATCH past its size gets notes\' 413, and not one connection reaches notes\' port (files are handed over in process)', async () => {
    const before = socketsOnPort(Number(ports.NOTES_PORT));
    const key = newKey();
    const sealedFile = randomBytes(3 * 1024 * 1024 + 7);
    const created = await callApi(gateway, 'POST', '/api/create.php', {
      client_encrypted: true, content: await seal('a note with a file', key), key_check: await keyCheck(key), files: [{ size: sealedFile.length }],
    });
    expect(created.status).toBe(200);
    const uploadUrl = `${gateway}${new URL(created.body.uploads[0].url as string).pathname}`;
    const tus = { 'Tus-Resumable': '1.0.0', 'Content-Type': 'application/offset+octet-stream' };
    const half = 2 * 1024 * 1024;
    // A PATCH past the upload's size: notes' own 413 reaches the client (nothing stored), its body drained.
    const tooLong = await fetch(uploadUrl, { method: 'PATCH', headers: { ...tus, 'Upload-Offset': '0' }, body: Buffer.concat([sealedFile, Buffer.alloc(1)]) });
    expect([tooLong.status, ((await tooLong.json()) as { code: string }).code]).toEqual([413, 'UPLOAD_TOO_LARGE']);
    expect((await fetch(uploadUrl, { method: 'PATCH', headers: { ...tus, 'Upload-Offset': '0' }, body: sealedFile.subarray(0, half) })).status).toBe(204);
    const head = await fetch(uploadUrl, { method: 'HEAD', headers: { 'Tus-Resumable': '1.0.0' } });
    expect(head.headers.get('upload-offset')).toBe(String(half));
    expect((await fetch(uploadUrl, { method: 'PATCH', headers: { ...tus, 'Upload-Offset': String(half) }, body: sealedFile.subarray(half) })).status).toBe(204);

    const browser = { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' };
    const page = await (await fetch(`${gateway}/${created.body.uuid}`, { headers: browser })).text();
    const formToken = /name="form_token" value="([^"]+)"/.exec(page)?.[1];
    expect(formToken).toBeDefined();
    const revealed = await (await fetch(`${gateway}/${created.body.uuid}`, {
      method: 'POST', headers: { ...browser, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `form_token=${encodeURIComponent(formToken!)}&key_check=${encodeURIComponent(await keyCheck(key))}`,
    })).text();
    const download = /<li data-download="([^"]+)"/.exec(revealed)?.[1];
    expect(download).toBeDefined();
    const downloadUrl = `${gateway}${new URL(download!).pathname}`;
    const whole = Buffer.from(await (await fetch(downloadUrl)).arrayBuffer());
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    expect(sha(whole)).toBe(sha(sealedFile));
    const range = await fetch(downloadUrl, { headers: { Range: 'bytes=10-1048585' } });
    expect(range.status).toBe(206);
    expect(sha(Buffer.from(await range.arrayBuffer()))).toBe(sha(sealedFile.subarray(10, 1048586)));

    // Over the loopback (separate services' undici pool) each transfer would have left a socket here,
    // kept alive or in TIME_WAIT; handed over in process there is none.
    expect(socketsOnPort(Number(ports.NOTES_PORT)).filter((socket) => !before.includes(socket))).toEqual([]);
  });

  it('when stopped with SIGTERM and started again on the same DATA_DIR, then it exits 0 and the note is still there', async () => {
    const exit = await app!.stop();
    expect(exit).toEqual({ code: 0, signal: null });
    // One drain (the gateway's 500 ms), then the services behind it at once: each waiting a drain of
    // its own made this 3.2 s here (5 s in a container on a loaded machine); now about 0.6 s.
    const stopped = /"signal":"SIGTERM","durationMs":(\d+),"msg":"stopped"/.exec(app!.output());
    expect(Number(stopped?.[1])).toBeLessThan(2_000);
    app = await start();
    const response = await callApi(gateway, 'GET', `/api/view/${created.uuid}.php`);
    expect(response.status).toBe(200);
    expect(response.body.note.uuid).toBe(created.uuid);
  });

  it('when interrupted with SIGINT (Ctrl-C), then it stops cleanly and exits 0', async () => {
    app!.kill('SIGINT');
    expect(await app!.exited).toEqual({ code: 0, signal: null });
    expect(app!.output()).toMatch(/"signal":"SIGINT".*"msg":"shutting down"/);
    await expect(fetch(`${gateway}/api/stats.php`)).rejects.toThrow();
  });
});

describe('npm start (all-in-one) with NODE_ENV=production', () => {
  it('when started, then it refuses with a message that says it is for a laptop, and exits non-zero', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-all-in-one-prod-'));
    try {
      await expect(
        runProcess({ script: MAIN, nodeArgs: NPM_START_NODE_ARGS, env: { ...CLEARED_ENV, ...(await portsEnv()), DATA_DIR: dataDir, NODE_ENV: 'production' }, readyLine: 'all-in-one ready' }),
      ).rejects.toThrow(/exited \(code 1[\s\S]*NODE_ENV=production: the all-in-one process[\s\S]*for a laptop only/);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server as TusServer } from '@tus/server';
import { requireService } from '@vanish/testkit/services';
import { FsFileStorage } from '../../notes/src/files/storage/fs-file-storage';
import { randomObjectName } from '../../notes/src/files/storage/object-names';
import { deriveClientKey } from '../src';
import { startGateway, testPrefix, TEST_LIMITER_KEY, type RunningGateway } from './support/gateway-harness';
import { deleteKeysWithPrefix, readCounter } from './support/redis-keys';
import { TestUpstream } from './support/test-upstream';

const MiB = 1024 * 1024;

/**
 * A stand-in for notes' files side: @tus/server on the real file-system adapter at /files/uploads/NAME
 * (uploads pre-created, as notes does at creation), and /files/d/NAME reading the stored object with a
 * Range. It records what reached it, so a test can tell that a refused request never did.
 */
class FilesUpstream {
  server!: Server;
  storage!: FsFileStorage;
  dir = '';
  patches = 0;
  /** Connections accepted on its port (none when the gateway hands files over in process). */
  connections = 0;
  url = '';
  /** Its request listener, for the gateway's in-process runs. */
  readonly listener = (req: IncomingMessage, res: ServerResponse): void => void this.handle(this.tus, req, res);
  private tus!: TusServer;
  /** Called for a download before it is answered (a test may hold the answer half way). */
  onDownload: ((res: ServerResponse, bytes: Buffer) => Promise<void>) | undefined;

  async start(): Promise<string> {
    this.dir = await mkdtemp(join(tmpdir(), 'vanish-gw-files-'));
    this.storage = await FsFileStorage.open(join(this.dir, 'files'));
    this.tus = new TusServer({ path: '/files/uploads', datastore: this.storage.tusDataStore() });
    this.server = createServer(this.listener);
    this.server.on('connection', () => this.connections++);
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  private async handle(tus: TusServer, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url?.startsWith('/files/uploads/')) {
      if (req.method === 'PATCH') this.patches++;
      await tus.handle(req, res);
      return;
    }
    const name = /^\/files\/d\/([0-9a-f]{32})$/.exec(req.url ?? '')?.[1];
    const object = name ? await this.storage.stat(name) : null;
    if (!name || !object?.complete) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"x","code":"NOT_FOUND","details":{"parameter":null,"message":"x"}}');
      return;
    }
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    const end = range ? Number(range[2]) : object.size - 1;
    res.writeHead(range ? 206 : 200, {
      'Content-Type': 'application/octet-stream', 'Accept-Ranges': 'bytes', 'Content-Length': String(end - start + 1),
      ...(range ? { 'Content-Range': `bytes ${start}-${end}/${object.size}` } : {}),
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    const stream = await this.storage.read(name, { start, end });
    if (this.onDownload) {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      await this.onDownload(res, Buffer.concat(chunks));
      return;
    }
    stream.pipe(res);
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
    await rm(this.dir, { recursive: true, force: true });
  }
}

interface Sent { status: number; headers: IncomingMessage['headers']; body: Buffer }

/** One raw HTTP request; `body` is written by the caller's function (which may pause or cut). */
function raw(url: string, method: string, headers: Record<string, string>, write?: (req: ReturnType<typeof request>) => Promise<void>): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (write) write(req).catch(reject);
    else req.end();
  });
}

const tusHeaders = (offset: number, length: number) => ({
  'Tus-Resumable': '1.0.0', 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset), 'Content-Length': String(length),
});

function bytesOf(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0, block = 0; i < length; i += 64, block++) createHash('sha512').update(`${seed}:${block}`).digest().copy(out, i);
  return out;
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function expectErrorShape(answer: Sent, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(JSON.parse(answer.body.toString('utf8'))).toEqual({ error: expect.any(String), code, details: { parameter: null, message: expect.any(String) } });
}

// The same behaviour twice, as gateway-http.int.test.ts does for the rest: relayed over a socket to notes'
// port (separate services, undici) and handed to notes' listener in process (the all-in-one's
// InProcessDispatcher): one door, one files relay, either transport.
describe.each([
  ['relayed over a socket', false],
  ['handed over in process', true],
] as const)('gateway files routes, %s (streamed relay, FILE_BYTES_PER_HOUR in the real Redis, idle timeout)', (_transport, inProcess) => {
  const files = new FilesUpstream();
  const stats = new TestUpstream('stats');
  const mailer = new TestUpstream('mailer');
  const prefixes: string[] = [];
  const gateways: RunningGateway[] = [];
  let notesUrl = '';

  const gateway = async (env: Record<string, string> = {}): Promise<{ gw: RunningGateway; prefix: string }> => {
    const prefix = testPrefix('files');
    prefixes.push(prefix);
    const overrides = inProcess ? { localUpstreams: (origin: string) => (origin === files.url ? files.listener : undefined) } : {};
    const gw = await startGateway({ REDIS_URL: 'redis://127.0.0.1:6379', RATE_LIMIT_KEY_PREFIX: prefix, NOTES_URL: notesUrl, STATS_URL: stats.url, MAILER_URL: mailer.url, ...env }, overrides);
    gateways.push(gw);
    return { gw, prefix };
  };

  const upload = async (size: number): Promise<string> => {
    const name = randomObjectName();
    await files.storage.createUpload(name, size);
    return name;
  };

  beforeAll(async () => {
    await requireService('redis');
    notesUrl = await files.start();
    await Promise.all([stats.start(), mailer.start()]);
  });

  afterAll(async () => {
    for (const gw of gateways) await gw.stop();
    for (const prefix of prefixes) await deleteKeysWithPrefix(prefix);
    await Promise.all([files.stop(), stats.stop(), mailer.stop()]);
  });

  it('when a file is uploaded in PATCHes and downloaded whole and in a range, then the bytes are the same, the answers are notes\' own (tus headers, OPTIONS, 206), and only the socket transport opens connections to notes\' port', async () => {
    const { gw } = await gateway();
    const connectionsBefore = files.connections;
    const bytes = bytesOf(3 * MiB + 5, 1);
    const name = await upload(bytes.length);
    const url = `${gw.url}/files/uploads/${name}`;

    const options = await raw(url, 'OPTIONS', { 'Tus-Resumable': '1.0.0' });
    expect(options.status).toBe(204);
    expect(options.headers['tus-version']).toBe('1.0.0');

    const first = await raw(url, 'PATCH', tusHeaders(0, 2 * MiB), async (req) => { req.end(bytes.subarray(0, 2 * MiB)); });
    expect(first.status).toBe(204);
    expect(first.headers['upload-offset']).toBe(String(2 * MiB));
    const head = await raw(url, 'HEAD', { 'Tus-Resumable': '1.0.0' });
    expect(head.headers['upload-offset']).toBe(String(2 * MiB));
    expect(head.headers['cache-control']).toBe('no-store');
    const rest = await raw(url, 'PATCH', tusHeaders(2 * MiB, bytes.length - 2 * MiB), async (req) => { req.end(bytes.subarray(2 * MiB)); });
    expect(rest.headers['upload-offset']).toBe(String(bytes.length));

    const whole = await raw(`${gw.url}/files/d/${name}`, 'GET', {});
    expect(whole.status).toBe(200);
    expect(sha(whole.body)).toBe(sha(bytes));
    const part = await raw(`${gw.url}/files/d/${name}`, 'GET', { Range: 'bytes=100-1048675' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 100-1048675/${bytes.length}`);
    expect(sha(part.body)).toBe(sha(bytes.subarray(100, 1048676)));
    // Handed over in process, not one connection reached notes' port; relayed, they did.
    if (inProcess) expect(files.connections).toBe(connectionsBefore);
    else expect(files.connections).toBeGreaterThan(connectionsBefore);
    // Secret paths never reach the log; the bytes relayed are counted.
    expect(gw.logs.text()).not.toContain(name);
    const metrics = await (await fetch(`${gw.adminUrl}/metrics`)).text();
    expect(Number(/gateway_file_bytes_total\{[^}]*direction="upload"[^}]*\} (\d+)/.exec(metrics)?.[1])).toBe(bytes.length);
    expect(Number(/gateway_file_bytes_total\{[^}]*direction="download"[^}]*\} (\d+)/.exec(metrics)?.[1])).toBe(bytes.length + 1048576);
  });

  it('when the client pauses half way, then notes has already stored what was sent (uploads stream), and a download reaches the client before notes has sent all of it', async () => {
    const { gw } = await gateway();
    const bytes = bytesOf(4 * MiB, 2);
    const name = await upload(bytes.length);
    const answer = raw(`${gw.url}/files/uploads/${name}`, 'PATCH', tusHeaders(0, bytes.length), async (req) => {
      req.write(bytes.subarray(0, MiB));
      // Held until notes has stored bytes of this very request: the gateway did not wait for the whole body.
      for (let i = 0; i < 200 && ((await files.storage.stat(name))?.size ?? 0) === 0; i++) await sleep(50);
      expect((await files.storage.stat(name))!.size).toBeGreaterThan(0);
      req.end(bytes.subarray(MiB));
    });
    expect((await answer).status).toBe(204);

    let release!: () => void;
    const released = new Promise<void>((resolve) => { release = resolve; });
    files.onDownload = async (res, body) => {
      res.write(body.subarray(0, MiB));
      await released;
      res.end(body.subarray(MiB));
    };
    try {
      const received = await new Promise<number>((resolve, reject) => {
        const req = request(`${gw.url}/files/d/${name}`, { agent: false }, (res) => {
          let got = 0;
          res.on('data', (c: Buffer) => {
            got += c.length;
            if (got >= MiB) resolve(got);
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end();
      });
      expect(received).toBeGreaterThanOrEqual(MiB);
    } finally {
      release();
      files.onDownload = undefined;
    }
  });

  it('when a PATCH is cut by the client, then the upload resumes from the offset notes reports and completes with the same bytes', async () => {
    const { gw } = await gateway();
    const bytes = bytesOf(3 * MiB, 3);
    const name = await upload(bytes.length);
    const url = `${gw.url}/files/uploads/${name}`;
    await raw(url, 'PATCH', tusHeaders(0, bytes.length), async (req) => {
      req.write(bytes.subarray(0, 2 * MiB));
      for (let i = 0; i < 200 && ((await files.storage.stat(name))?.size ?? 0) < MiB; i++) await sleep(50);
      req.destroy();
    }).catch(() => undefined);
    let offset = 0;
    for (let i = 0; i < 100; i++) {
      offset = Number((await raw(url, 'HEAD', { 'Tus-Resumable': '1.0.0' })).headers['upload-offset']);
      if (offset > 0 && (await raw(url, 'HEAD', { 'Tus-Resumable': '1.0.0' })).headers['upload-offset'] === String(offset)) break;
      await sleep(50);
    }
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThan(bytes.length);
    const rest = await raw(url, 'PATCH', tusHeaders(offset, bytes.length - offset), async (req) => { req.end(bytes.subarray(offset)); });
    expect(rest.status).toBe(204);
    expect(sha((await raw(`${gw.url}/files/d/${name}`, 'GET', {})).body)).toBe(sha(bytes));
  });

  it('when a PATCH would pass FILE_BYTES_PER_HOUR, then it answers 429 in the error shape before notes sees it, the window counts what passed, and unsent bytes are given back', async () => {
    const { gw, prefix } = await gateway({ FILE_BYTES_PER_HOUR: String(3 * MiB) });
    const counterKey = `${prefix}:file-bytes:${deriveClientKey(Buffer.from(TEST_LIMITER_KEY, 'base64'), '127.0.0.1')}`;
    const bytes = bytesOf(4 * MiB, 4);
    const name = await upload(bytes.length);
    const url = `${gw.url}/files/uploads/${name}`;
    expect((await raw(url, 'PATCH', tusHeaders(0, 2 * MiB), async (req) => { req.end(bytes.subarray(0, 2 * MiB)); })).status).toBe(204);
    expect(await readCounter(counterKey)).toBe(2 * MiB);

    const patchesBefore = files.patches;
    const refused = await raw(url, 'PATCH', tusHeaders(2 * MiB, 2 * MiB), async (req) => { req.end(bytes.subarray(2 * MiB)); });
    expectErrorShape(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(files.patches).toBe(patchesBefore);
    expect((await files.storage.stat(name))!.size).toBe(2 * MiB);
    expect(await readCounter(counterKey)).toBe(2 * MiB);

    // What fits still passes; a PATCH cut after half its bytes counts only those.
    const cutName = await upload(MiB);
    await raw(`${gw.url}/files/uploads/${cutName}`, 'PATCH', tusHeaders(0, MiB), async (req) => {
      req.write(bytes.subarray(0, MiB / 2));
      for (let i = 0; i < 200 && ((await files.storage.stat(cutName))?.size ?? 0) < MiB / 2; i++) await sleep(50);
      req.destroy();
    }).catch(() => undefined);
    for (let i = 0; i < 100 && (await readCounter(counterKey)) !== 2 * MiB + MiB / 2; i++) await sleep(50);
    expect(await readCounter(counterKey)).toBe(2 * MiB + MiB / 2);
  });

  // @tus/server answers a PATCH past the declared size at once with `Connection: close`: the upstream
  // connection closes under the body still being sent (EPIPE), before undici reads the answer. The
  // gateway then answers 502 in the error shape once the client's body is drained, and stays up; the
  // window counts the bytes that passed the gateway, not more. (notes itself should read such a body
  // before refusing it, so that its own 413 reaches the client: docs/files.md.)
  it('when notes closes the connection under a PATCH it refused, then the client gets 502 in the error shape, nothing is stored, and the gateway goes on', async () => {
    const { gw, prefix } = await gateway();
    const counterKey = `${prefix}:file-bytes:${deriveClientKey(Buffer.from(TEST_LIMITER_KEY, 'base64'), '127.0.0.1')}`;
    const name = await upload(MiB);
    const tooLong = await raw(`${gw.url}/files/uploads/${name}`, 'PATCH', tusHeaders(0, 2 * MiB), async (req) => {
      req.on('error', () => undefined); // notes may close before the body is all sent
      req.end(bytesOf(2 * MiB, 7));
    });
    expect([413, 502]).toContain(tooLong.status);
    if (tooLong.status === 502) expectErrorShape(tooLong, 502, 'UPSTREAM_UNAVAILABLE');
    expect((await files.storage.stat(name))!.size).toBe(0);
    expect(await readCounter(counterKey)).toBeLessThanOrEqual(2 * MiB);
    const bytes = bytesOf(MiB, 8);
    expect((await raw(`${gw.url}/files/uploads/${name}`, 'PATCH', tusHeaders(0, MiB), async (req) => { req.end(bytes); })).status).toBe(204);
    expect(sha((await raw(`${gw.url}/files/d/${name}`, 'GET', {})).body)).toBe(sha(bytes));
  });

  it('when a PATCH has no Content-Length, or a compressed body, then it is refused in the error shape and notes never sees it', async () => {
    const { gw } = await gateway();
    const name = await upload(100);
    const patchesBefore = files.patches;
    const chunked = await raw(`${gw.url}/files/uploads/${name}`, 'PATCH', { 'Tus-Resumable': '1.0.0', 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': '0', 'Transfer-Encoding': 'chunked' },
      async (req) => { req.end(Buffer.alloc(100)); });
    expectErrorShape(chunked, 411, 'LENGTH_REQUIRED');
    const gzip = await raw(`${gw.url}/files/uploads/${name}`, 'PATCH', { ...tusHeaders(0, 100), 'Content-Encoding': 'gzip' }, async (req) => { req.end(Buffer.alloc(100)); });
    expectErrorShape(gzip, 400, 'INVALID_CONTENT_TYPE');
    expect(files.patches).toBe(patchesBefore);
    expect((await files.storage.stat(name))!.size).toBe(0);
  });

  it('when an upload stops sending for FILE_IDLE_TIMEOUT_SECONDS, then it is cut (408 in the error shape), while one that keeps moving for longer is not', async () => {
    const { gw } = await gateway({ FILE_IDLE_TIMEOUT_SECONDS: '1' });
    const stalled = await upload(MiB);
    const started = Date.now();
    const answer = await raw(`${gw.url}/files/uploads/${stalled}`, 'PATCH', tusHeaders(0, MiB), async (req) => { req.write(Buffer.alloc(64 * 1024)); });
    expectErrorShape(answer, 408, 'UPLOAD_IDLE');
    expect(Date.now() - started).toBeLessThan(15_000);

    const slow = await upload(10 * 32 * 1024);
    const moving = await raw(`${gw.url}/files/uploads/${slow}`, 'PATCH', tusHeaders(0, 10 * 32 * 1024), async (req) => {
      for (let i = 0; i < 10; i++) {
        req.write(Buffer.alloc(32 * 1024, i));
        await sleep(300); // 3 s in all, three times the idle timeout
      }
      req.end();
    });
    expect(moving.status).toBe(204);
    expect((await files.storage.stat(slow))!.complete).toBe(true);
  });
});

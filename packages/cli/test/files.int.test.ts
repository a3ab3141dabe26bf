import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keyCheck, newKey } from '@vanish/envelope';
import { runToEnd, type CommandResult } from '@vanish/testkit/process';
import * as fileStream from '../../envelope/file-stream';

/*
 * `vanish create --attach` and `vanish open --out DIR` (DECISIONS 14) as a user runs them, against a small local
 * server that plays vanish's side of the contract (docs/file-format.md; the real server is in
 * test/cli/files.e2e.test.ts): tus HEAD/PATCH with offsets, the note page with data-files, the revealed page's
 * download list, downloads with Range. It can break a connection once in the middle of an upload or a
 * download, and serve a changed byte, which the real server never does.
 */
const BIN = resolve(__dirname, '../bin/vanish.js');
const UUID = '9b2d3f0a-1c2e-4d5f-8a9b-0c1d2e3f4a5b';

interface Upload { token: string; size: number; data: Buffer[]; offset: number }
interface Faults { cutUploadAt?: number; cutDownloadAt?: number; flipDownloadByte?: number }

class FakeVanish {
  base = '';
  uploads: Upload[] = [];
  note: { content: string; keyCheck: string } | null = null;
  requests: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }> = [];
  revealed = false;
  faults: Faults = {};
  private server: Server;

  constructor() {
    this.server = createServer((req, res) => { this.handle(req, res).catch((err) => { res.writeHead(500).end(String(err)); }); });
  }

  async start(): Promise<void> {
    await new Promise<void>((done) => this.server.listen(0, '127.0.0.1', done));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((done) => { this.server.close(() => done()); });
  }

  stored(i: number): Buffer {
    return Buffer.concat(this.uploads[i]!.data);
  }

  private async body(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    this.requests.push({ method: req.method ?? '', url: url.pathname, headers: req.headers });
    if (req.method === 'POST' && url.pathname === '/api/create.php') {
      const body = JSON.parse((await this.body(req)).toString('utf8')) as { content: string; key_check: string; files?: Array<{ size: number }> };
      this.note = { content: body.content, keyCheck: body.key_check };
      this.uploads = (body.files ?? []).map((file, i) => ({ token: `upload${i}${'x'.repeat(24)}`, size: file.size, data: [], offset: 0 }));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        success: true, uuid: UUID, url: `${this.base}/${UUID}`,
        uploads: this.uploads.map((upload) => ({ url: `${this.base}/files/uploads/${upload.token}`, size: upload.size })),
      }));
      return;
    }
    const uploadMatch = /^\/files\/uploads\/(.+)$/.exec(url.pathname);
    if (uploadMatch) {
      const upload = this.uploads.find((candidate) => candidate.token === uploadMatch[1]);
      if (!upload) { res.writeHead(404).end(); return; }
      const tusHeaders = { 'tus-resumable': '1.0.0', 'upload-offset': String(upload.offset), 'upload-length': String(upload.size), 'cache-control': 'no-store' };
      if (req.method === 'HEAD') { res.writeHead(200, tusHeaders).end(); return; }
      if (req.method !== 'PATCH') { res.writeHead(405).end(); return; }
      if (Number(req.headers['upload-offset']) !== upload.offset) { res.writeHead(409, tusHeaders).end(); return; }
      for await (const chunk of req) {
        let piece = chunk as Buffer;
        const cut = this.faults.cutUploadAt;
        if (cut !== undefined && upload.offset + piece.length >= cut) {
          // The network breaks: what arrived before the cut is kept, as a tus server keeps it.
          piece = piece.subarray(0, cut - upload.offset);
          upload.data.push(piece);
          upload.offset += piece.length;
          this.faults.cutUploadAt = undefined;
          req.socket.destroy();
          return;
        }
        upload.data.push(piece);
        upload.offset += piece.length;
        if (upload.offset > upload.size) { res.writeHead(413).end(); return; }
      }
      res.writeHead(204, { ...tusHeaders, 'upload-offset': String(upload.offset) }).end();
      return;
    }
    if (url.pathname === `/${UUID}` && req.method === 'GET') {
      if (!this.note || this.revealed) { res.writeHead(404).end(); return; }
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<form method="post" data-client-encrypted data-files="${this.uploads.length}"><input type="hidden" name="form_token" value="tok"><input type="hidden" name="key_check" value=""></form>`);
      return;
    }
    if (url.pathname === `/${UUID}` && req.method === 'POST') {
      const form = new URLSearchParams((await this.body(req)).toString('utf8'));
      if (!this.note || this.revealed) { res.writeHead(404).end(); return; }
      if (form.get('key_check') !== this.note.keyCheck) { res.writeHead(400, { 'content-type': 'text/html' }).end('<p id="reveal-error">wrong key</p>'); return; }
      this.revealed = true;
      const items = this.uploads.map((upload, i) => `<li data-download="${this.base}/files/d/download${i}${'y'.repeat(24)}" data-size="${upload.size}"></li>`).join('');
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<pre id="note-content" data-envelope="${this.note.content}"></pre><ol id="vanish-files" data-count="${this.uploads.length}">${items}</ol>`);
      return;
    }
    const downloadMatch = /^\/files\/d\/download(\d+)y+$/.exec(url.pathname);
    if (downloadMatch && req.method === 'GET') {
      const bytes = Buffer.from(this.stored(Number(downloadMatch[1])));
      if (this.faults.flipDownloadByte !== undefined) bytes[this.faults.flipDownloadByte]! ^= 1;
      const range = /^bytes=(\d+)-$/.exec(String(req.headers.range ?? ''));
      const start = range ? Number(range[1]) : 0;
      const headers = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes', 'content-length': String(bytes.length - start) };
      res.writeHead(range ? 206 : 200, range ? { ...headers, 'content-range': `bytes ${start}-${bytes.length - 1}/${bytes.length}` } : headers);
      const cut = this.faults.cutDownloadAt;
      if (cut !== undefined && cut > start) {
        this.faults.cutDownloadAt = undefined;
        res.write(bytes.subarray(start, cut), () => { setTimeout(() => res.socket?.destroy(), 50); });
        return;
      }
      res.end(bytes.subarray(start));
      return;
    }
    res.writeHead(404).end();
  }
}

function vanish(args: string[], cwd?: string, stdin = ''): Promise<CommandResult> {
  return runToEnd(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, VANISH_URL: undefined, VANISH_PASSCODE: undefined }, stdin });
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

let server: FakeVanish;
let work: string;
beforeEach(async () => {
  server = new FakeVanish();
  await server.start();
  work = mkdtempSync(join(tmpdir(), 'vanish-cli-files-'));
});
afterEach(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

describe('vanish create --attach and vanish open --out DIR', () => {
  it('when a note with two files and a text is created over an upload cut at 40 %, then it resumes; open writes both files byte for byte, resuming a broken download', async () => {
    const big = randomBytes(3 * 65536 + 4321);
    writeFileSync(join(work, 'big.bin'), big);
    writeFileSync(join(work, 'empty.txt'), '');
    server.faults.cutUploadAt = Math.floor(fileStream.sealedSize(big.length) * 0.4);
    const created = await vanish(['create', '--server', server.base, '--attach', join(work, 'big.bin'), '-a', join(work, 'empty.txt')], work, 'the files, as promised');
    expect(created.stderr).not.toContain('unexpected');
    expect(created.code).toBe(0);
    const link = created.stdout.trim();
    expect(link).toMatch(new RegExp(`^${server.base}/${UUID}#[A-Za-z0-9_-]{43}$`));
    // Sealed: nothing the server received holds the plaintext or the names.
    expect(server.uploads.map((upload) => upload.offset)).toEqual([fileStream.sealedSize(big.length), 16]);
    expect(server.stored(0).includes(big.subarray(0, 64))).toBe(false);
    expect(server.note!.content).not.toMatch(/big\.bin|as promised/);
    const patches = server.requests.filter((request) => request.method === 'PATCH' && request.url.includes('upload0'));
    expect(patches.length).toBeGreaterThanOrEqual(2);
    expect(server.requests.some((request) => request.method === 'HEAD')).toBe(true);

    server.faults.cutDownloadAt = 100_000;
    const out = join(work, 'out');
    const opened = await vanish(['open', '--out', out, link], work);
    expect(opened.stderr).toContain('were written to');
    expect(opened.code).toBe(0);
    expect(opened.stdout).toBe('the files, as promised');
    expect(sha256(readFileSync(join(out, 'big.bin')))).toBe(sha256(big));
    expect(readFileSync(join(out, 'empty.txt')).length).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['big.bin', 'empty.txt']);
    expect(server.requests.filter((request) => request.url.startsWith('/files/d/download0')).map((request) => request.headers.range ?? 'all')).toEqual(['all', 'bytes=100000-']);
  });

  it('when a note with files is opened without --out, then vanish says to give it and consumes nothing', async () => {
    writeFileSync(join(work, 'a.txt'), 'a');
    const created = await vanish(['create', '--server', server.base, '--attach', join(work, 'a.txt')], work);
    expect(created.code).toBe(0);
    const opened = await vanish(['open', created.stdout.trim()], work);
    expect(opened.code).toBe(2);
    expect(opened.stderr).toContain('this note carries a file: give --out DIR');
    expect(opened.stderr).toContain('Nothing was consumed');
    expect(server.revealed).toBe(false);
  });

  it('when the manifest names files with paths, control characters or names that exist, then they are written safely inside DIR and nothing is replaced without --force', async () => {
    const key = newKey();
    const contents = [Buffer.from('one'), Buffer.from('two'), Buffer.from('three'), Buffer.from('four')];
    const entries = [
      fileStream.newFileEntry('../../escaped.txt', 'text/plain', 3),
      fileStream.newFileEntry('..', '', 3),
      fileStream.newFileEntry('bell\u0007name?.txt', '', 5),
      fileStream.newFileEntry('kept.txt', '', 4),
    ];
    server.note = { content: await fileStream.sealManifest('', entries, key), keyCheck: await keyCheck(key) };
    server.uploads = [];
    for (const [i, entry] of entries.entries()) {
      const sealer = fileStream.createSealer(key, entry.nonce);
      const sealed = Buffer.concat([...(await sealer.push(new Uint8Array(contents[i]!))), ...(await sealer.finish())]);
      server.uploads.push({ token: `t${i}`, size: sealed.length, data: [sealed], offset: sealed.length });
    }
    const out = join(work, 'out');
    mkdirSync(out);
    writeFileSync(join(out, 'kept.txt'), 'mine');
    const opened = await vanish(['open', '--out', out, `${server.base}/${UUID}#${key}`], work);
    expect(opened.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual(['bell_name_.txt', 'escaped.txt', 'file-2', 'kept (2).txt', 'kept.txt']);
    expect(existsSync(join(work, 'escaped.txt'))).toBe(false);
    expect(readFileSync(join(out, 'kept.txt'), 'utf8')).toBe('mine');
    expect(readFileSync(join(out, 'kept (2).txt'), 'utf8')).toBe('four');
    expect(opened.stderr).toContain('kept.txt exists, so it was not replaced (--force replaces)');
    expect(opened.stderr).toContain('the note names it "../../escaped.txt"');
  });

  it('when a downloaded file was changed on the server, then vanish says which segment does not open and keeps nothing of it', async () => {
    writeFileSync(join(work, 'data.bin'), randomBytes(200_000));
    const created = await vanish(['create', '--server', server.base, '--attach', join(work, 'data.bin')], work);
    expect(created.code).toBe(0);
    server.faults.flipDownloadByte = 70_000;
    const out = join(work, 'out');
    const opened = await vanish(['open', '--out', out, created.stdout.trim()], work);
    expect(opened.code).toBe(1);
    expect(opened.stderr).toContain('data.bin does not open, so nothing of it was kept: segment 1 of the file does not open (bytes 65552 to 131103)');
    expect(readdirSync(out)).toEqual([]);
  });

  it('when --attach names a folder or a missing file, then nothing is sent', async () => {
    const folder = await vanish(['create', '--server', server.base, '--attach', work], work);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain('is not a regular file');
    const missing = await vanish(['create', '--server', server.base, '--attach', join(work, 'nope')], work);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');
    expect(server.requests).toEqual([]);
  });
});

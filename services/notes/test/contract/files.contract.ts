import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, silentLogger } from '@vanish/common';
import { keyCheck, newKey, seal } from '@vanish/envelope';
import { waitFor } from '@vanish/testkit/net';
import { createNotesService, loadNotesConfig, type NotesService } from '../../src';
import type { FileStorage } from '../../src/files/storage/ports';
import { checkApiAnswer } from '@vanish/testkit/openapi';
import { send as sendUnchecked, postJson, type Answer, type SendOptions } from '../support/api-client';
import type { ContractDatabase } from './notes-storage.contract';

/**
 * Files of notes (DECISIONS 14, issue 33) through the whole notes service on one database and one
 * storage: creation with declared sizes, tus uploads, the reveal's download addresses, downloads with
 * Range, the receipt's download entries, every bad input, and gone-means-gone checked in the store
 * itself after every way a note can end.
 */
export interface ContractStorage {
  /** The storage the service uses; undefined: the default (the file system under DATA_DIR/files). */
  storage?: FileStorage;
  /** What the test reads the store through (the same folder or bucket). */
  inspect: FileStorage;
  close(): Promise<void>;
}

const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const TUS = { 'tus-resumable': '1.0.0' };
const PATCH = { ...TUS, 'content-type': 'application/offset+octet-stream' };
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const tokenOf = (page: string): string => {
  const match = /name="form_token" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('no form token on the page');
  return match[1]!;
};

/** As the api client's send, and every answer under /files is checked against the OpenAPI document too. */
async function send(baseUrl: string, method: string, path: string, options: SendOptions = {}): Promise<Answer> {
  const answer = await sendUnchecked(baseUrl, method, path, options);
  if (/^\/files\/(uploads|d)\/[^/]+$/.test(path)) {
    // A file's bytes may happen to read as JSON (a one-byte file "4"): only JSON answers are given parsed.
    const json = (answer.headers['content-type'] ?? '').includes('json');
    checkApiAnswer({ method, path, status: answer.status, headers: answer.headers, body: json ? answer.json ?? answer.text : answer.text });
  }
  return answer;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export function filesContract(name: string, createDatabase: () => Promise<ContractDatabase>, createStorage: (dataDir: string) => Promise<ContractStorage>): void {
  describe(`files of notes on ${name}`, () => {
    let database: ContractDatabase;
    let dataDir: string;
    let storage: ContractStorage;
    let service: NotesService;
    let base: string;
    let adminBase: string;
    const clock = new ManualClock(new Date());

    beforeAll(async () => {
      database = await createDatabase();
      dataDir = mkdtempSync(join(tmpdir(), 'notes-files-'));
      storage = await createStorage(dataDir);
      const config = loadNotesConfig({
        PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: database.url,
        MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`, RECEIPT_SIGNING_KEYS: `r1:${KEY(4)}`,
        PUBLIC_BASE_URL: 'http://127.0.0.1:1', FILE_MAX_COUNT: '3', FILE_MAX_BYTES: '1000000', SWEEP_INTERVAL_MS: '100',
      });
      service = await createNotesService(config, { logger: silentLogger, kdf: { N: 1024, r: 8, p: 1 }, clock, ...(storage.storage ? { fileStorage: storage.storage } : {}) });
      const { port, adminPort } = await service.start();
      base = `http://127.0.0.1:${port}`;
      adminBase = `http://127.0.0.1:${adminPort}`;
    });

    afterAll(async () => {
      await service?.stop();
      await storage?.close();
      await database?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** A note sealed as the page and the CLI seal it (the envelope and key_check of DECISIONS 13). */
    const createWithFiles = async (sizes: number[], extra: Record<string, unknown> = {}) => {
      const key = newKey();
      const answer = await postJson(base, {
        client_encrypted: true, content: await seal('manifest and text', key), key_check: await keyCheck(key), files: sizes.map((size) => ({ size })), ...extra,
      });
      expect(answer.status).toBe(200);
      const uploads = answer.json.uploads as Array<{ url: string; size: number }>;
      return {
        key, uuid: answer.json.uuid as string, noteRef: answer.json.note_ref as string, receiptId: new URL(answer.json.receipt_url as string).pathname.slice(3), uploads,
        paths: uploads.map((upload) => new URL(upload.url).pathname),
      };
    };

    const objectsOf = async (uuid: string): Promise<string[]> => {
      const rows = await service.knex('note_files').select('object_name').where({ note_lookup: lookupOf(uuid) }).orderBy('position') as Array<{ object_name: string }>;
      return rows.map((row) => row.object_name);
    };
    const lookupOf = (uuid: string): string => (service.notes as unknown as { crypto: { lookup(uuid: string): string } }).crypto.lookup(uuid);

    const upload = async (path: string, bytes: Buffer, chunk = bytes.length): Promise<Answer> => {
      let last: Answer | undefined;
      for (let offset = 0; offset < bytes.length; offset += chunk) {
        last = await send(base, 'PATCH', path, { headers: { ...PATCH, 'upload-offset': String(offset) }, body: bytes.subarray(offset, offset + chunk) });
        if (last.status !== 204) return last;
      }
      return last!;
    };

    const reveal = async (uuid: string, key: string, passcode?: string): Promise<Answer> => {
      const page = await send(base, 'GET', `/${uuid}`, { headers: { 'user-agent': FIREFOX } });
      const fields = [`form_token=${encodeURIComponent(tokenOf(page.text))}`, `key_check=${encodeURIComponent(await keyCheck(key))}`];
      if (passcode !== undefined) fields.push(`passcode=${encodeURIComponent(passcode)}`);
      return send(base, 'POST', `/${uuid}`, { headers: { ...FORM, 'user-agent': FIREFOX }, body: fields.join('&') });
    };

    const downloadsOf = (page: string): Array<{ path: string; size: number }> => {
      const list = /<ol id="vanish-files" data-count="(\d+)"[^>]*>(.*?)<\/ol>/s.exec(page);
      if (!list) return [];
      const items = [...list[2]!.matchAll(/<li data-download="([^"]+)" data-size="(\d+)"><\/li>/g)].map((m) => ({ path: new URL(m[1]!).pathname, size: Number(m[2]) }));
      expect(items).toHaveLength(Number(list[1]));
      return items;
    };

    /** Every object of these names is gone from the store itself, and from the listing. */
    const expectGoneFromStore = async (names: readonly string[]) => {
      expect(names.length).toBeGreaterThan(0);
      await waitFor(async () => (await Promise.all(names.map((n) => storage.inspect.stat(n)))).every((s) => s === null), { description: 'the stored bytes to be deleted', timeoutMs: 20_000 });
      const listed: string[] = [];
      for await (const object of storage.inspect.list()) listed.push(object.name);
      for (const n of names) expect(listed).not.toContain(n);
      const rows = await service.knex('note_files').whereIn('object_name', names).count({ n: '*' }) as Array<{ n: number | string }>;
      expect(Number(rows[0]!.n)).toBe(0);
    };

    const events = async () => (await service.knex('outbox').select('body').orderBy('seq') as Array<{ body: string }>)
      .map((row) => JSON.parse(row.body) as { event: string; data: { note_id: string; reason?: string } });

    it('when a note with three files is created, uploaded in chunks, revealed and downloaded, then every byte is the one sent, Range and HEAD work, and the receipt lists each download', async () => {
      const files = [randomBytes(70_000), randomBytes(1), randomBytes(3000)];
      const note = await createWithFiles(files.map((f) => f.length));
      expect(note.uploads.map((u) => u.size)).toEqual([70_000, 1, 3000]);
      for (const path of note.paths) expect(path).toMatch(/^\/files\/uploads\/[A-Za-z0-9_-]{43}$/);

      // Stored: random object names unrelated to the tokens, keyed hashes only, pre-created uploads of the declared size.
      const names = await objectsOf(note.uuid);
      expect(names).toHaveLength(3);
      const rows = await service.knex('note_files').select('*').where({ note_lookup: lookupOf(note.uuid) }).orderBy('position') as Array<Record<string, unknown>>;
      const dump = JSON.stringify(rows);
      for (const path of note.paths) expect(dump).not.toContain(path.slice('/files/uploads/'.length));
      expect(dump).not.toContain(note.uuid);
      expect(rows.map((row) => [row.state, Number(row.size)])).toEqual([['uploading', 70_000], ['uploading', 1], ['uploading', 3000]]);
      for (const n of names) expect(await storage.inspect.stat(n)).toMatchObject({ size: 0, complete: false });

      // While uploads are incomplete the note page says so, and a reveal claims nothing.
      const pending = await send(base, 'GET', `/${note.uuid}`);
      expect(pending.text).toContain('still being uploaded');
      expect(pending.text).toContain('data-uploading');
      const early = await reveal(note.uuid, note.key);
      expect(early.status).toBe(409);
      expect(early.text).toContain('still being uploaded');
      expect((await send(base, 'GET', `/api/view/${note.uuid}.php`)).json.note.current_views).toBe(0);

      const head = await send(base, 'HEAD', note.paths[0]!, { headers: TUS });
      expect(head.status).toBe(200);
      expect(head.headers).toMatchObject({ 'upload-offset': '0', 'upload-length': '70000', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
      expect((await upload(note.paths[0]!, files[0]!, 16_384)).status).toBe(204);
      expect((await upload(note.paths[1]!, files[1]!)).status).toBe(204);
      expect((await send(base, 'GET', `/${note.uuid}`)).text).toContain('still being uploaded');
      expect((await upload(note.paths[2]!, files[2]!, 1000)).status).toBe(204);
      expect((await send(base, 'HEAD', note.paths[2]!, { headers: TUS })).headers['upload-offset']).toBe('3000');

      const revealed = await reveal(note.uuid, note.key);
      expect(revealed.status).toBe(200);
      const downloads = downloadsOf(revealed.text);
      expect(downloads.map((d) => d.size)).toEqual([70_000, 1, 3000]);
      for (const d of downloads) expect(d.path).toMatch(/^\/files\/d\/[A-Za-z0-9_-]{43}$/);

      for (const [i, d] of downloads.entries()) {
        const got = await send(base, 'GET', d.path, { headers: { 'user-agent': FIREFOX } });
        expect(got.status).toBe(200);
        expect(got.headers).toMatchObject({
          'content-type': 'application/octet-stream', 'accept-ranges': 'bytes', 'content-length': String(files[i]!.length),
          'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer',
        });
      }
      // Bytes compared exactly (the api client decodes text; fetch keeps bytes).
      const whole = Buffer.from(await (await fetch(`${base}${downloads[0]!.path}`)).arrayBuffer());
      expect(sha256(whole)).toBe(sha256(files[0]!));
      const part = await fetch(`${base}${downloads[0]!.path}`, { headers: { range: 'bytes=1000-1999' } });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe('bytes 1000-1999/70000');
      expect(Buffer.from(await part.arrayBuffer()).equals(files[0]!.subarray(1000, 2000))).toBe(true);
      const tail = await fetch(`${base}${downloads[2]!.path}`, { headers: { range: 'bytes=2500-' } });
      expect(tail.status).toBe(206);
      expect(Buffer.from(await tail.arrayBuffer()).equals(files[2]!.subarray(2500))).toBe(true);
      const headOnly = await send(base, 'HEAD', downloads[0]!.path);
      expect(headOnly.status).toBe(200);
      expect(headOnly.headers['content-length']).toBe('70000');

      const receipt = (await send(base, 'GET', `/api/receipt/${note.receiptId}.php`)).json.receipt;
      const downloadsOnReceipt = receipt.timeline.filter((entry: { event: string }) => entry.event === 'file_download');
      // Three GETs with a browser's agent and one by Node's fetch; Range resumes and a HEAD are not starts.
      expect(downloadsOnReceipt.map((entry: { client: string }) => entry.client).slice(0, 3)).toEqual(['browser', 'browser', 'browser']);
      expect(downloadsOnReceipt).toHaveLength(4);
      const receiptPage = await send(base, 'GET', `/r/${note.receiptId}`);
      expect(receiptPage.text).toContain('File download started (browser)');

      // The note was read once (its only view): it ended, and its bytes stay for the download window only.
      expect((await send(base, 'GET', `/api/view/${note.uuid}.php`)).status).toBe(404);
      await service.fileSweeper.sweepOnce();
      for (const n of names) expect(await storage.inspect.stat(n)).not.toBeNull();
      clock.advance(16 * MINUTE);
      const late = await send(base, 'GET', downloads[0]!.path);
      expect(late.status).toBe(410);
      expect(late.json).toMatchObject({ code: 'DOWNLOAD_EXPIRED', details: { parameter: null } });
      await service.fileSweeper.sweepOnce();
      await expectGoneFromStore(names);
      expect((await send(base, 'GET', downloads[1]!.path)).status).toBe(410);
    });

    it('when uploads and downloads are refused (bad method, no tus version, wrong type, past the size, a finished part, unknown token, Range past the end), then each answers a clear 4xx in the error shape and the stored bytes are unchanged', async () => {
      const bytes = randomBytes(100);
      const note = await createWithFiles([100, 10], { max_views: 2 });
      const [path, small] = note.paths as [string, string];
      const expectError = (answer: Answer, status: number, code: string) => {
        expect([answer.status, answer.json?.code]).toEqual([status, code]);
        expect(answer.json.details).toMatchObject({ parameter: null });
        expect(answer.headers['content-type']).toMatch(/^application\/json/);
        expect(answer.headers['cache-control']).toBe('no-store');
      };
      const creationPost = await send(base, 'POST', path, { headers: { ...TUS, 'upload-length': '100' } });
      expectError(creationPost, 405, 'METHOD_NOT_ALLOWED');
      expect(creationPost.headers.allow).toBe('HEAD, PATCH, OPTIONS');
      expectError(await send(base, 'POST', '/files/uploads', { headers: { ...TUS, 'upload-length': '100' } }), 405, 'METHOD_NOT_ALLOWED');
      expectError(await send(base, 'PATCH', `/files/uploads/${'A'.repeat(43)}/x`, { headers: TUS }), 404, 'NOT_FOUND');
      expectError(await send(base, 'DELETE', path, { headers: TUS }), 405, 'METHOD_NOT_ALLOWED');
      expectError(await send(base, 'GET', path), 405, 'METHOD_NOT_ALLOWED');
      expect((await send(base, 'OPTIONS', path)).status).toBe(204);
      expectError(await send(base, 'PATCH', path, { headers: { 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body: bytes }), 412, 'TUS_VERSION_UNSUPPORTED');
      expectError(await send(base, 'PATCH', path, { headers: { ...TUS, 'content-type': 'application/octet-stream', 'upload-offset': '0' }, body: bytes }), 415, 'INVALID_CONTENT_TYPE');
      expectError(await send(base, 'PATCH', `/files/uploads/${'A'.repeat(43)}`, { headers: { ...PATCH, 'upload-offset': '0' }, body: bytes }), 404, 'NOT_FOUND');
      expect((await send(base, 'HEAD', '/files/uploads/short', { headers: TUS })).status).toBe(404);
      expect((await send(base, 'HEAD', `/files/uploads/${'A'.repeat(43)}`, { headers: TUS })).status).toBe(404);
      // Past the declared size: refused before a byte is stored.
      expectError(await send(base, 'PATCH', path, { headers: { ...PATCH, 'upload-offset': '0' }, body: randomBytes(101) }), 413, 'UPLOAD_TOO_LARGE');
      const [object, smallObject] = await objectsOf(note.uuid) as [string, string];
      expect(await storage.inspect.stat(object)).toMatchObject({ size: 0, complete: false });
      // A wrong offset: 409, nothing written.
      expectError(await send(base, 'PATCH', path, { headers: { ...PATCH, 'upload-offset': '5' }, body: bytes.subarray(0, 5) }), 409, 'OFFSET_MISMATCH');
      expect((await upload(path, bytes)).status).toBe(204);
      // A second upload to a finished part: 409, the part unchanged.
      expectError(await send(base, 'PATCH', path, { headers: { ...PATCH, 'upload-offset': '0' }, body: randomBytes(100) }), 409, 'UPLOAD_COMPLETE');
      expectError(await send(base, 'PATCH', path, { headers: { ...PATCH, 'upload-offset': '100' }, body: randomBytes(1) }), 409, 'UPLOAD_COMPLETE');
      expect(await storage.inspect.stat(object)).toMatchObject({ size: 100, complete: true });
      // A body longer than declared, sent without Content-Length (chunked): refused, the part holds its declared bytes at most.
      const chunked = await fetch(`${base}${small}`, {
        method: 'PATCH', headers: { ...PATCH, 'upload-offset': '0' }, duplex: 'half',
        body: new ReadableStream({ start(controller) { controller.enqueue(new Uint8Array(6)); controller.enqueue(new Uint8Array(6)); controller.close(); } }),
      } as RequestInit);
      expect(chunked.status).toBe(413);
      expect(((await chunked.json()) as { code: string }).code).toBe('UPLOAD_TOO_LARGE');
      const smallState = await storage.inspect.stat(smallObject);
      expect(smallState!.size).toBeLessThanOrEqual(10);
      if (smallState!.size < 10) {
        const head = await send(base, 'HEAD', small, { headers: TUS });
        expect((await upload(small, Buffer.alloc(10 - Number(head.headers['upload-offset'])).fill(1))).status).toBe(204);
      }

      const revealed = await reveal(note.uuid, note.key);
      const [download] = downloadsOf(revealed.text);
      const past = await send(base, 'GET', download!.path, { headers: { range: 'bytes=100-' } });
      expectError(past, 416, 'RANGE_NOT_SATISFIABLE');
      expect(past.headers['content-range']).toBe('bytes */100');
      expectError(await send(base, 'GET', `/files/d/${'B'.repeat(43)}`), 404, 'NOT_FOUND');
      expectError(await send(base, 'POST', download!.path), 405, 'METHOD_NOT_ALLOWED');
      expect((await fetch(`${base}${download!.path}`)).status).toBe(200);
      // Still one view left: the note lives, its bytes too.
      expect(await storage.inspect.stat(object)).toMatchObject({ complete: true });
    });

    it('when a creation declares files wrongly (without client_encrypted, empty, not integers, too many, too many bytes), then it answers 400/413 and stores nothing at all', async () => {
      const before = await countAll();
      const key = newKey();
      const sealed = { client_encrypted: true, content: await seal('x', key), key_check: await keyCheck(key) };
      const cases: Array<[unknown, number, string]> = [
        [{ content: 'plain text', files: [{ size: 10 }] }, 400, 'INVALID_FILES'],
        [{ ...sealed, files: [] }, 400, 'INVALID_FILES'],
        [{ ...sealed, files: [{ size: 0 }] }, 400, 'INVALID_FILES'],
        [{ ...sealed, files: [{ size: 1.5 }] }, 400, 'INVALID_FILES'],
        [{ ...sealed, files: [{ size: '10' }] }, 400, 'INVALID_FILES'],
        [{ ...sealed, files: 'a.txt' }, 400, 'INVALID_FILES'],
        [{ ...sealed, files: [{ size: 1 }, { size: 1 }, { size: 1 }, { size: 1 }] }, 400, 'INVALID_FILES'],
        [{ ...sealed, files: [{ size: 600_000 }, { size: 400_001 }] }, 413, 'FILES_TOO_LARGE'],
      ];
      for (const [body, status, code] of cases) {
        const answer = await postJson(base, body);
        expect([answer.status, answer.json.code, answer.json.details.parameter]).toEqual([status, code, 'files']);
      }
      expectNothingNew(before, await countAll());
    });

    it('when the file store fails while a creation pre-creates its uploads, then it answers 503 and neither a note nor a part remains', async () => {
      const before = await countAll();
      const real = service.files.storage;
      const createUpload = real.createUpload.bind(real);
      let calls = 0;
      real.createUpload = async (objectName: string, size: number) => {
        calls += 1;
        if (calls === 2) throw new Error('the store is down');
        return createUpload(objectName, size);
      };
      try {
        const key = newKey();
        const answer = await postJson(base, { client_encrypted: true, content: await seal('x', key), key_check: await keyCheck(key), files: [{ size: 5 }, { size: 6 }] });
        expect([answer.status, answer.json.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
        expect(answer.headers['retry-after']).toBeDefined();
      } finally {
        real.createUpload = createUpload;
      }
      expectNothingNew(before, await countAll());
    });

    /** No note, file row or object was added (objects of earlier tests may still be leaving the store meanwhile). */
    const expectNothingNew = (before: Awaited<ReturnType<typeof countAll>>, after: Awaited<ReturnType<typeof countAll>>) => {
      expect({ notes: after.notes, files: after.files }).toEqual({ notes: before.notes, files: before.files });
      expect(after.objects.filter((name) => !before.objects.includes(name))).toEqual([]);
    };

    /** Notes, file rows and objects in the store: a refused creation changes none of them. */
    const countAll = async () => {
      const [notes] = await service.knex('notes').count({ n: '*' }) as Array<{ n: number | string }>;
      const [fileRows] = await service.knex('note_files').count({ n: '*' }) as Array<{ n: number | string }>;
      const objects: string[] = [];
      for await (const object of storage.inspect.list()) objects.push(object.name);
      return { notes: Number(notes!.n), files: Number(fileRows!.n), objects: objects.sort() };
    };

    it('when notes with files end in every way (views, time, lock-out, creator, takedown, retention, an abandoned upload), then their bytes leave the store, and a note with files is one note to events', async () => {
      const complete = async (sizes: number[], extra: Record<string, unknown> = {}) => {
        const note = await createWithFiles(sizes, extra);
        for (const [i, path] of note.paths.entries()) expect((await upload(path, randomBytes(sizes[i]!))).status).toBe(204);
        return { ...note, names: await objectsOf(note.uuid) };
      };
      const eventsBefore = (await events()).length;
      // (Events name the note by its note_ref, returned at creation.)

      // Lock-out: five wrong passcodes (no reveal happened, so no download window holds the bytes).
      const locked = await complete([20, 30], { passcode: 'right' });
      for (let i = 0; i < 5; i += 1) await reveal(locked.uuid, locked.key, 'wrong');
      expect((await send(base, 'GET', `/${locked.uuid}`)).status).toBe(404);
      await expectGoneFromStore(locked.names);

      // The creator ends it from the receipt.
      const ended = await complete([40]);
      await expect(service.receipts.endNow(ended.receiptId)).resolves.toBe('ended');
      await expectGoneFromStore(ended.names);

      // An operator takedown.
      const takenDown = await complete([50]);
      await expect(service.notes.takedown(takenDown.uuid)).resolves.toBe(true);
      await expectGoneFromStore(takenDown.names);

      // Time: a one-hour note; retention: an unread view note past NOTE_RETENTION_HOURS; abandoned: a declared size that lied (half sent).
      const timed = await complete([60], { expiry_type: 'time', expiry_time: 1 });
      const unread = await complete([70]);
      const abandoned = await createWithFiles([80, 90]);
      expect((await upload(abandoned.paths[0]!, randomBytes(40))).status).toBe(204);
      const abandonedNames = await objectsOf(abandoned.uuid);
      clock.advance(2 * HOUR);
      await expectGoneFromStore(timed.names);
      expect(await storage.inspect.stat(unread.names[0]!)).not.toBeNull();
      expect(await storage.inspect.stat(abandonedNames[0]!)).toMatchObject({ size: 40, complete: false });
      clock.advance(23 * HOUR);
      await expectGoneFromStore(abandonedNames);
      expect((await send(base, 'GET', `/${abandoned.uuid}`)).status).toBe(404);
      clock.advance(700 * HOUR);
      await expectGoneFromStore(unread.names);

      // Views: covered by the first test (after the download window). Events: one per note, never one per file.
      const refs = new Set([locked, ended, takenDown, timed, unread, abandoned].map((note) => note.noteRef));
      const after = (await events()).slice(eventsBefore).filter((e) => refs.has(e.data.note_id));
      const created = after.filter((e) => e.event === 'note.created');
      const ends = after.filter((e) => e.event === 'note.destroyed' || e.event === 'note.expired');
      expect(created).toHaveLength(6);
      expect(ends.map((e) => e.data.reason).sort()).toEqual(['creator', 'lockout', 'retention', 'retention', 'takedown', 'time']);
      expect(new Set(ends.map((e) => e.data.note_id)).size).toBe(6);
    });

    it('when an object lies in the store that no note knows, then the sweep deletes it once it is older than the grace period and counts it', async () => {
      clock.set(new Date()); // the object's own time is the machine's; earlier tests moved the service clock far ahead
      const orphan = randomBytes(16).toString('hex');
      await storage.inspect.createUpload(orphan, 10);
      await service.fileSweeper.sweepOnce({ scanStore: true });
      expect(await storage.inspect.stat(orphan)).not.toBeNull(); // too young: its creation may still be committing
      clock.advance(11 * MINUTE);
      // The grace compares the object's own time with the service clock, which the test moved.
      const result = await service.fileSweeper.sweepOnce({ scanStore: true });
      expect(result.orphans).toBeGreaterThanOrEqual(1);
      expect(await storage.inspect.stat(orphan)).toBeNull();
      const metrics = await (await fetch(`${adminBase}/metrics`)).text();
      const value = (metric: string): number => {
        const line = metrics.split('\n').find((l) => l.startsWith(metric) && /[ ,{}]/.test(l[metric.length] ?? ''));
        if (!line) throw new Error(`no ${metric} in /metrics`);
        return Number(line.slice(line.lastIndexOf(' ') + 1));
      };
      expect(value('notes_file_objects_swept_total{reason="orphan"')).toBeGreaterThanOrEqual(1);
      expect(value('notes_file_objects_swept_total{reason="ended"')).toBeGreaterThanOrEqual(1);
      expect(value('notes_file_objects_swept_total{reason="abandoned"')).toBeGreaterThanOrEqual(2);
      expect(value('notes_file_bytes_in_total')).toBeGreaterThan(70_000);
      expect(value('notes_file_bytes_out_total')).toBeGreaterThan(70_000);
      expect(value('notes_file_sweeps_total')).toBeGreaterThanOrEqual(2);
      expect(value('notes_file_uploads_completed_total')).toBeGreaterThanOrEqual(3);
      // Every note with files has ended by now (the clock passed every retention).
      expect(value('notes_file_bytes_stored')).toBe(0);
      expect(value('notes_file_uploads_in_progress')).toBe(0);
    });
  });
}

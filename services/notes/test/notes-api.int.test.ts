import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ManualClock, PERMISSIONS_POLICY, createLogger } from '@vanish/common';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { createNotesService, loadNotesConfig, type NotesService } from '../src';
import { OPENAPI_DOCUMENT_FILE } from '../src/http/api-routes';
import { LogCapture, postJson, send, type Answer } from './support/api-client';

/**
 * The notes API in process on port 0, through the real composition root, against SQLite and
 * MariaDB: every SPEC 4.1/7/8 and DECISIONS 4 row, the lifecycle rules the API shows, DECISIONS 8
 * headers, and the OpenAPI document checked on every answer (inside `send`).
 */
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const PUBLIC_BASE_URL = 'https://notes.example.test';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const EMOJI = '\u{1F600}';
const HOUR = 3_600_000;

const engines: Array<[string, () => Promise<{ url: string; db?: TestDatabase }>]> = [
  ['SQLite', async () => ({ url: `sqlite:${join(mkdtempSync(join(tmpdir(), 'notes-api-')), 'notes.db')}` })],
  ['MariaDB', async () => {
    const db = await createTestDatabase('vanish_notes_api');
    return { url: db.url, db };
  }],
];

describe.each(engines)('notes API on %s', (_engine, makeDatabase) => {
  let service: NotesService;
  let base: string;
  let admin: string;
  let db: TestDatabase | undefined;
  let dataDir: string;
  const logs = new LogCapture();
  const clock = new ManualClock(new Date());
  const uuids: string[] = [];

  const create = async (body: Record<string, unknown>) => {
    const answer = await postJson(base, body);
    expect(answer.status).toBe(200);
    uuids.push(answer.json.uuid);
    return answer;
  };
  const expectError = (answer: Answer, status: number, code: string, parameter: string | null = null) => {
    expect({ status: answer.status, code: answer.json?.code, parameter: answer.json?.details?.parameter })
      .toEqual({ status, code, parameter });
    expect(typeof answer.json.error).toBe('string');
    expect(answer.json.details.message).toBe(answer.json.error);
  };

  beforeAll(async () => {
    const database = await makeDatabase();
    db = database.db;
    dataDir = mkdtempSync(join(tmpdir(), 'notes-api-data-'));
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: database.url,
      PUBLIC_BASE_URL, MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`,
      SWEEP_INTERVAL_MS: '3600000',
    });
    service = await createNotesService(config, {
      logger: createLogger('notes', 'debug', logs),
      clock,
      kdf: { N: 2 ** 10, r: 8, p: 1 }, // cheap passcode KDF for speed; production cost is asserted in note-crypto.test.ts
    });
    const { port, adminPort } = await service.start();
    base = `http://127.0.0.1:${port}`;
    admin = `http://127.0.0.1:${adminPort}`;
  });

  afterAll(async () => {
    await service?.stop();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('POST /api/create.php', () => {
    it('when only content is sent, then 200 with the SPEC 2.2 body (and DECISIONS 11\'s note_ref): a v4 uuid, the link, the retention deadline, one view', async () => {
      const before = clock.now().getTime();
      const { json } = await create({ content: 'hello' });
      // SPEC 2.2's fields, plus receipt_url and note_ref (DECISIONS 11 and 12: additive to 1.2.0).
      expect(Object.keys(json).sort()).toEqual(['expires_at', 'has_passcode', 'max_views', 'note_ref', 'receipt_url', 'success', 'url', 'uuid']);
      expect(json.receipt_url).toMatch(new RegExp(`^${PUBLIC_BASE_URL}/r/[A-Za-z0-9_-]{43}$`));
      expect(json.note_ref).toMatch(/^[0-9a-f]{32}$/);
      expect(json.success).toBe(true);
      expect(json.uuid).toMatch(UUID_V4);
      expect(json.url).toBe(`${PUBLIC_BASE_URL}/${json.uuid}`);
      expect(json.max_views).toBe(1);
      expect(json.has_passcode).toBe(false);
      expect(json.expires_at).toMatch(TIMESTAMP);
      expect(Date.parse(`${json.expires_at}Z`) - before).toBeGreaterThanOrEqual(720 * HOUR - 1000);
      expect(Date.parse(`${json.expires_at}Z`) - before).toBeLessThanOrEqual(720 * HOUR + 1000);
    });

    it('when a time note asks for 5 views, then expires_at is creation + expiry_time and max_views is 100', async () => {
      const before = clock.now().getTime();
      const { json } = await create({ content: 'x', expiry_type: 'time', expiry_time: 2, max_views: 5 });
      expect(json.max_views).toBe(100);
      expect(Math.abs(Date.parse(`${json.expires_at}Z`) - before - 2 * HOUR)).toBeLessThanOrEqual(1000);
    });

    it('when a both note has a passcode and e-mails, then they are accepted and only has_passcode shows', async () => {
      const { json, text } = await create({
        content: 'x', expiry_type: 'both', expiry_time: 8760, max_views: 100, passcode: 'secret',
        notification_email: 'reader@example.com', send_link_email: 'friend@example.org',
      });
      expect(json).toMatchObject({ max_views: 100, has_passcode: true });
      expect(text).not.toMatch(/secret|example\.(com|org)/);
    });

    it('when 10,000 emoji are sent, also as \\u escapes of surrogate pairs (120,000 bytes), then both are accepted', async () => {
      await create({ content: EMOJI.repeat(10_000) });
      const escaped = `{"content":"${'\\ud83d\\ude00'.repeat(10_000)}"}`;
      expect(Buffer.byteLength(escaped)).toBeGreaterThan(120_000);
      const answer = await send(base, 'POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body: escaped });
      expect(answer.status).toBe(200);
      uuids.push(answer.json.uuid);
    });

    it('when content holds NUL, RTL override, combining marks and emoji, then a reveal gives it back byte-identical', async () => {
      const content = 'a\u0000b \u202Eevil\u202C e\u0301 \u{1F469}\u200D\u{1F4BB} \u05E9\u05DC\u05D5\u05DD';
      const { json } = await create({ content });
      const revealed = await service.notes.reveal(json.uuid, null);
      expect(revealed).toMatchObject({ outcome: 'revealed', content });
      expect(Buffer.from((revealed as { content: string }).content, 'utf8').equals(Buffer.from(content, 'utf8'))).toBe(true);
    });

    it('when unknown fields (csrf_token) and prototype-pollution keys are sent, then they are ignored', async () => {
      const answer = await send(base, 'POST', '/api/create.php', {
        headers: { 'content-type': 'application/json' },
        body: '{"content":"x","csrf_token":"abc","__proto__":{"max_views":50,"polluted":1},"constructor":{"prototype":{"polluted":1}}}',
      });
      expect(answer.status).toBe(200);
      expect(answer.json.max_views).toBe(1);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      uuids.push(answer.json.uuid);
    });

    it.each([
      ['content missing', {}, 'INVALID_CONTENT', 'content'],
      ['content empty', { content: '' }, 'INVALID_CONTENT', 'content'],
      ['content blank', { content: ' \n\t ' }, 'INVALID_CONTENT', 'content'],
      ['content a number', { content: 42 }, 'INVALID_CONTENT', 'content'],
      ['content null', { content: null }, 'INVALID_CONTENT', 'content'],
      ['content 10,001 emoji', { content: EMOJI.repeat(10_001) }, 'CONTENT_TOO_LONG', 'content'],
      ['content 10,001 letters', { content: 'a'.repeat(10_001) }, 'CONTENT_TOO_LONG', 'content'],
      ['expiry_type unknown', { content: 'x', expiry_type: 'forever' }, 'INVALID_EXPIRY_TYPE', 'expiry_type'],
      ['expiry_type a number', { content: 'x', expiry_type: 1 }, 'INVALID_EXPIRY_TYPE', 'expiry_type'],
      ['expiry_time 0', { content: 'x', expiry_time: 0 }, 'INVALID_EXPIRY_TIME', 'expiry_time'],
      ['expiry_time 8761', { content: 'x', expiry_time: 8761 }, 'INVALID_EXPIRY_TIME', 'expiry_time'],
      ['expiry_time 1.5', { content: 'x', expiry_time: 1.5 }, 'INVALID_EXPIRY_TIME', 'expiry_time'],
      ['expiry_time "5"', { content: 'x', expiry_time: '5' }, 'INVALID_EXPIRY_TIME', 'expiry_time'],
      ['expiry_time true', { content: 'x', expiry_time: true }, 'INVALID_EXPIRY_TIME', 'expiry_time'],
      ['expiry_time -1', { content: 'x', expiry_time: -1 }, 'INVALID_EXPIRY_TIME', 'expiry_time'],
      ['max_views 0', { content: 'x', max_views: 0 }, 'INVALID_MAX_VIEWS', 'max_views'],
      ['max_views 101', { content: 'x', max_views: 101 }, 'INVALID_MAX_VIEWS', 'max_views'],
      ['max_views 2.5', { content: 'x', max_views: 2.5 }, 'INVALID_MAX_VIEWS', 'max_views'],
      ['max_views "3"', { content: 'x', max_views: '3' }, 'INVALID_MAX_VIEWS', 'max_views'],
      ['max_views 101 on a time note', { content: 'x', expiry_type: 'time', max_views: 101 }, 'INVALID_MAX_VIEWS', 'max_views'],
      ['passcode 129 characters', { content: 'x', passcode: 'p'.repeat(129) }, 'INVALID_PASSCODE', 'passcode'],
      ['passcode a number', { content: 'x', passcode: 1234 }, 'INVALID_PASSCODE', 'passcode'],
      ['notification_email without @', { content: 'x', notification_email: 'nobody' }, 'INVALID_EMAIL', 'notification_email'],
      ['notification_email with CRLF', { content: 'x', notification_email: 'a@example.com\r\nBcc: b@example.com' }, 'INVALID_EMAIL', 'notification_email'],
      ['notification_email with a display name', { content: 'x', notification_email: 'Al <a@example.com>' }, 'INVALID_EMAIL', 'notification_email'],
      ['send_link_email two addresses', { content: 'x', send_link_email: 'a@example.com, b@example.com' }, 'INVALID_EMAIL', 'send_link_email'],
      ['send_link_email 255 characters', { content: 'x', send_link_email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com` }, 'INVALID_EMAIL', 'send_link_email'],
      ['send_link_email a number', { content: 'x', send_link_email: 7 }, 'INVALID_EMAIL', 'send_link_email'],
      ['a JSON array body', [{ content: 'x' }], 'INVALID_JSON', null],
      ['a JSON string body', 'content', 'INVALID_JSON', null],
      ['a JSON null body', null, 'INVALID_JSON', null],
    ])('when %s, then 400 with its code and parameter', async (_name, body, code, parameter) => {
      expectError(await postJson(base, body), 400, code, parameter);
    });

    it('when a 254-character address is sent, then it is accepted', async () => {
      await create({ content: 'x', send_link_email: `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com` });
    });

    it('when content is a lone surrogate as a JSON escape, then 400 INVALID_CONTENT (never silently replaced)', async () => {
      const answer = await send(base, 'POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body: '{"content":"a\\ud800b"}' });
      expectError(answer, 400, 'INVALID_CONTENT', 'content');
    });

    it('when the body has bytes that are not UTF-8 (a CESU-encoded surrogate), then 400 INVALID_JSON', async () => {
      const body = Buffer.concat([Buffer.from('{"content":"a'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]);
      expectError(await send(base, 'POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body }), 400, 'INVALID_JSON');
    });

    it.each([
      ['truncated', '{"content":"x"'],
      ['single quotes', "{'content':'x'}"],
      ['a trailing comma', '{"content":"x",}'],
      ['not JSON at all', 'content=x'],
    ])('when the JSON is %s, then 400 INVALID_JSON', async (_name, body) => {
      expectError(await send(base, 'POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body }), 400, 'INVALID_JSON');
    });

    it.each([
      ['text/plain', { 'content-type': 'text/plain' }],
      ['a form', { 'content-type': 'application/x-www-form-urlencoded' }],
      ['no Content-Type', {}],
    ])('when the Content-Type is %s, then 400 INVALID_CONTENT_TYPE', async (_name, headers) => {
      expectError(await send(base, 'POST', '/api/create.php', { headers, body: '{"content":"x"}' }), 400, 'INVALID_CONTENT_TYPE');
    });

    it('when the body is gzip-encoded, then 400 INVALID_CONTENT_TYPE (no inflating of untrusted bodies)', async () => {
      const answer = await send(base, 'POST', '/api/create.php', {
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync('{"content":"x"}'),
      });
      expectError(answer, 400, 'INVALID_CONTENT_TYPE');
    });

    it('when the body is 1 MB, then 400 PAYLOAD_TOO_LARGE and the service keeps serving', async () => {
      const body = `{"content":"${'a'.repeat(1024 * 1024)}"}`;
      expectError(await send(base, 'POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body }), 400, 'PAYLOAD_TOO_LARGE');
      await create({ content: 'still serving' });
    });

    it('when the body is empty, then 400 INVALID_CONTENT', async () => {
      expectError(await send(base, 'POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body: '' }), 400, 'INVALID_CONTENT', 'content');
    });
  });

  describe('GET /api/view/{uuid}.php', () => {
    it('when the note exists, then 200 with SPEC 2.1 metadata, and reading it never changes current_views', async () => {
      const created = (await create({ content: 'meta', expiry_type: 'view', max_views: 3, passcode: 'pw' })).json;
      for (let i = 0; i < 3; i += 1) {
        const { status, json } = await send(base, 'GET', `/api/view/${created.uuid}.php`);
        expect(status).toBe(200);
        expect(json).toEqual({
          success: true,
          note: {
            uuid: created.uuid, has_passcode: true, expiry_type: 'view', expires_at: created.expires_at, max_views: 3,
            current_views: 0, is_destroyed: false, created_at: expect.stringMatching(TIMESTAMP),
          },
        });
      }
      await service.notes.reveal(created.uuid, 'pw');
      const after = await send(base, 'GET', `/api/view/${created.uuid}.php`);
      expect(after.json.note.current_views).toBe(1);
      expect((await send(base, 'GET', `/api/view/${created.uuid}.php`)).json.note.current_views).toBe(1);
    });

    it('when HEAD is sent, then it answers like GET without a body', async () => {
      const { uuid } = (await create({ content: 'head' })).json;
      const answer = await send(base, 'HEAD', `/api/view/${uuid}.php`);
      expect(answer.status).toBe(200);
      expect(answer.text).toBe('');
      expect((await send(base, 'GET', `/api/view/${uuid}.php`)).json.note.current_views).toBe(0);
    });

    it.each([
      ['an unknown v4 uuid', '/api/view/3b1f2c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d.php'],
      ['a malformed uuid', '/api/view/not-a-uuid.php'],
      ['an uppercase uuid', '/api/view/3B1F2C4D-5E6F-4A0B-8C1D-2E3F4A5B6C7D.php'],
      ['a path traversal', '/api/view/..%2F..%2Fetc%2Fpasswd.php'],
      ['an undecodable escape', '/api/view/%E0%A4%A.php'],
      ['a very long id', `/api/view/${'a'.repeat(2000)}.php`],
    ])('when the uuid is %s, then 404 NOTE_NOT_FOUND', async (_name, path) => {
      expectError(await send(base, 'GET', path), 404, 'NOTE_NOT_FOUND');
    });

    it('when the note was destroyed by its last view, then 404 NOTE_NOT_FOUND (the same body as unknown)', async () => {
      const { uuid } = (await create({ content: 'once' })).json;
      expect(await service.notes.reveal(uuid, null)).toMatchObject({ outcome: 'revealed', destroyed: true });
      const gone = await send(base, 'GET', `/api/view/${uuid}.php`);
      const unknown = await send(base, 'GET', '/api/view/3b1f2c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d.php');
      expectError(gone, 404, 'NOTE_NOT_FOUND');
      expect(gone.text).toBe(unknown.text);
    });

    it('when a time note is past expires_at (even before the sweeper ran), then 404 NOTE_NOT_FOUND', async () => {
      const { uuid } = (await create({ content: 'soon', expiry_type: 'time', expiry_time: 1 })).json;
      expect((await send(base, 'GET', `/api/view/${uuid}.php`)).status).toBe(200);
      clock.advance(HOUR + 1000);
      expectError(await send(base, 'GET', `/api/view/${uuid}.php`), 404, 'NOTE_NOT_FOUND');
    });
  });

  describe('methods, unknown paths, headers', () => {
    it.each([
      ['GET', '/api/create.php', 'POST, OPTIONS'],
      ['PUT', '/api/create.php', 'POST, OPTIONS'],
      ['DELETE', '/api/create.php', 'POST, OPTIONS'],
      ['PATCH', '/api/create.php', 'POST, OPTIONS'],
      ['HEAD', '/api/create.php', 'POST, OPTIONS'],
      ['POST', '/api/view/3b1f2c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d.php', 'GET, HEAD, OPTIONS'],
      ['DELETE', '/api/view/3b1f2c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d.php', 'GET, HEAD, OPTIONS'],
      ['POST', '/api/openapi.json', 'GET, HEAD, OPTIONS'],
    ])('when %s %s, then 405 METHOD_NOT_ALLOWED with Allow: %s', async (method, path, allow) => {
      const answer = await send(base, method, path);
      expect(answer.status).toBe(405);
      expect(answer.headers.allow).toBe(allow);
      if (method !== 'HEAD') expectError(answer, 405, 'METHOD_NOT_ALLOWED');
    });

    it.each([
      ['/api/create.php', 'POST, OPTIONS'],
      ['/api/view/3b1f2c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d.php', 'GET, HEAD, OPTIONS'],
      ['/api/openapi.json', 'GET, HEAD, OPTIONS'],
    ])('when OPTIONS %s, then 204 with Allow (never 405)', async (path, allow) => {
      const answer = await send(base, 'OPTIONS', path);
      expect(answer.status).toBe(204);
      expect(answer.headers.allow).toBe(allow);
    });

    it.each(['/api', '/api/', '/api/nope', '/api/view/abc', '/api/create'])('when GET %s (not served here), then 404 NOT_FOUND', async (path) => {
      expectError(await send(base, 'GET', path), 404, 'NOT_FOUND');
    });

    it('when a path outside /api is unknown, then 404 with the DECISIONS 8 security headers', async () => {
      const answer = await send(base, 'GET', '/no/such/page', { unchecked: true });
      expect(answer.status).toBe(404);
      expect(answer.headers).toMatchObject({
        'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer',
        'cross-origin-opener-policy': 'same-origin', 'cross-origin-resource-policy': 'same-origin', 'x-xss-protection': '0', 'permissions-policy': PERMISSIONS_POLICY,
      });
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
    });

    it('when GET /api/openapi.json, then the repository document is served as JSON', async () => {
      const answer = await send(base, 'GET', '/api/openapi.json');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect(answer.json).toEqual(JSON.parse(readFileSync(OPENAPI_DOCUMENT_FILE, 'utf8')));
    });

    it('when any API answer comes back, then it carries the DECISIONS 8 headers', async () => {
      const answers = [
        await postJson(base, { content: 'h' }),
        await postJson(base, {}),
        await send(base, 'GET', '/api/view/x.php'),
        await send(base, 'PUT', '/api/create.php'),
        await send(base, 'OPTIONS', '/api/create.php'),
        await send(base, 'GET', '/api/zzz'),
      ];
      uuids.push(answers[0]!.json.uuid);
      for (const { headers } of answers) {
        expect(headers).toMatchObject({
          'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'api-version': '1.2.0',
          'cross-origin-opener-policy': 'same-origin', 'cross-origin-resource-policy': 'same-origin', 'x-xss-protection': '0', 'permissions-policy': PERMISSIONS_POLICY,
        });
        expect(headers['x-powered-by']).toBeUndefined();
      }
    });
  });

  describe('operations', () => {
    it('when /healthz and /readyz are asked on the admin port, then both are 200 with the database check', async () => {
      expect((await send(admin, 'GET', '/healthz', { unchecked: true })).status).toBe(200);
      const ready = await send(admin, 'GET', '/readyz', { unchecked: true });
      expect(ready.status).toBe(200);
      expect(ready.json.checks).toEqual({ database: 'ok' });
    });

    it('when /metrics is scraped, then requests are labelled by route template and creations by expiry type, never by uuid', async () => {
      const { uuid } = (await create({ content: 'metrics' })).json;
      await send(base, 'GET', `/api/view/${uuid}.php`);
      const metrics = (await send(admin, 'GET', '/metrics', { unchecked: true })).text;
      expect(metrics).toMatch(/notes_http_request_duration_seconds_count\{[^}]*route="\/api\/view\/:uuid\.php"/);
      expect(metrics).toMatch(/notes_http_request_duration_seconds_count\{[^}]*route="\/api\/create\.php"/);
      expect(metrics).toMatch(/notes_created_total\{[^}]*expiry_type="view"[^}]*\} [1-9]/);
      for (const id of uuids) expect(metrics).not.toContain(id);
    });

    it('when the logs are read after all of the above, then no uuid, content, passcode or address appears in them', () => {
      const text = logs.text();
      expect(text).toContain('"route":"/api/view/:uuid.php"');
      expect(uuids.length).toBeGreaterThan(5);
      for (const id of uuids) expect(text).not.toContain(id);
      expect(text).not.toContain('reader@example.com');
      expect(text).not.toContain('3b1f2c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d');
      expect(text).not.toMatch(/"secret"|still serving/);
    });
  });
});

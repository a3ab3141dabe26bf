import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConsumerOpener, KeyRing, MAIL_SEAL_PURPOSE, ManualClock, silentLogger } from '@vanish/common';
import { waitFor } from '@vanish/testkit/net';
import { createHash, randomBytes } from 'node:crypto';
import { keyCheck } from '@vanish/envelope';
import * as fileStream from '@vanish/envelope/file-stream';
import { newKeyPair, newNoteKeyTo, noteKeyFor, openFrom, keyCheckFor, requestEnvelope, sealTo } from '@vanish/envelope/request-seal';
import { createNotesService, loadNotesConfig, type NotesService } from '../src';
import { send } from './support/api-client';

/** Requests (DECISIONS 15) over HTTP on the real notes service and SQLite. */
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const JSON_HEADERS = { 'content-type': 'application/json' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const MAIL_PRIVATE = KeyRing.parse(`m1:${KEY(3)}`);

describe('requests over HTTP', () => {
  let dataDir: string;
  let service: NotesService;
  let base: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'notes-requests-'));
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PRIVATE_KEYS: MAIL_PRIVATE.serialize(), WEBHOOK_PRIVATE_KEYS: `w1:${KEY(6)}`,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', PUBLIC_BASE_URL: 'http://127.0.0.1:1',
    });
    service = await createNotesService(config, { logger: silentLogger, kdf: { N: 1024, r: 8, p: 1 }, resolveHost: async () => ['127.0.0.1'] });
    const { port } = await service.start();
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const counts = async () => {
    const [requests, submissions, notes] = await Promise.all(['requests', 'request_submissions', 'notes'].map(async (table) => {
      const [{ n }] = await service.knex(table).count({ n: '*' }) as Array<{ n: number | string }>;
      return Number(n);
    }));
    return { requests, submissions, notes };
  };

  const makeRequest = async (extra: Record<string, unknown> = {}) => {
    const pair = await newKeyPair();
    const made = await send(base, 'POST', '/api/request.php', { headers: JSON_HEADERS, body: JSON.stringify({ public_key: pair.publicKey, label: 'Your VPN password, please', ...extra }) });
    expect(made.status).toBe(200);
    const requestPath = new URL(made.json.request_url as string).pathname;
    const inboxPath = new URL(made.json.inbox_url as string).pathname;
    expect(requestPath).toMatch(/^\/q\/[A-Za-z0-9_-]{43}$/);
    expect(inboxPath).toMatch(/^\/i\/[A-Za-z0-9_-]{43}$/);
    return { pair, answer: made.json, requestId: requestPath.slice(3), inboxId: inboxPath.slice(3) };
  };

  const submit = (requestId: string, body: unknown) => send(base, 'POST', `/api/request/${requestId}.php`, { headers: JSON_HEADERS, body: JSON.stringify(body) });

  it('when a count-3 request takes three sealed answers, then the fourth is 410, each sent an e-mail and an event, and only the private key opens them', async () => {
    const { pair, answer, requestId, inboxId } = await makeRequest({ max_submissions: 3, notification_email: 'asker@example.com', webhook_url: 'http://hooks.example/in' });
    expect(answer.webhook_secret).toMatch(/^whsec_/);
    const outboxBefore = Number(((await service.knex('outbox').count({ n: '*' })) as Array<{ n: number }>)[0]!.n);

    const sender = await send(base, 'GET', `/api/request/${requestId}.php`);
    expect(sender.json).toEqual({ success: true, label: 'Your VPN password, please', public_key: pair.publicKey, allow_files: false, expires_at: expect.any(String) });

    const texts = ['first secret', 'second secret 🔐', 'third secret'];
    for (const [index, text] of texts.entries()) {
      const sealed = await sealTo(pair.publicKey, text);
      const done = await submit(requestId, { content: sealed.content, key_check: sealed.keyCheck });
      expect(done.status).toBe(200);
      expect(done.json.submission).toBe(index + 1);
      expect(done.json.receipt_url).toMatch(/\/r\/[A-Za-z0-9_-]{43}$/);
    }
    const fourth = await sealTo(pair.publicKey, 'one too many');
    const refused = await submit(requestId, { content: fourth.content, key_check: fourth.keyCheck });
    expect([refused.status, refused.json.code]).toEqual([410, 'REQUEST_CLOSED']);
    expect((await send(base, 'GET', `/api/request/${requestId}.php`)).status).toBe(410);

    // Three e-mails sealed to the mailer and three request.submitted events, nothing for the refused one.
    const rows: Array<{ routing_key: string; body: string }> = await service.knex('outbox').select('routing_key', 'body').orderBy('seq').offset(outboxBefore);
    const mails = rows.filter((row) => row.routing_key === 'mail.send').map((row) => JSON.parse(new ConsumerOpener(MAIL_PRIVATE, MAIL_SEAL_PURPOSE).open(JSON.parse(row.body).sealed)));
    expect(mails.map((mail) => [mail.kind, mail.to, mail.number, mail.max_submissions])).toEqual([1, 2, 3].map((n) => ['request', 'asker@example.com', n, 3]));
    const events = rows.filter((row) => row.routing_key === 'request.submitted').map((row) => JSON.parse(row.body));
    expect(events.map((event) => [event.data.request_ref, event.data.submission])).toEqual([1, 2, 3].map((n) => [answer.request_ref, n]));
    expect(JSON.stringify(rows)).not.toContain(requestId);
    expect(JSON.stringify(rows)).not.toContain(inboxId);

    const inbox = await send(base, 'GET', `/api/inbox/${inboxId}.php`);
    expect(inbox.json.status).toBe('full');
    expect(inbox.json.submissions.map((item: { state: string }) => item.state)).toEqual(['waiting', 'waiting', 'waiting']);

    // A wrong key's proof claims nothing; the right one reveals, and the page's envelope opens with the private key only.
    const stranger = await newKeyPair();
    const first = inbox.json.submissions[0] as { submission: number; ephemeral_key: string };
    const wrong = await send(base, 'POST', `/i/${inboxId}`, { headers: FORM, body: `submission=1&key_check=${await keyCheckFor(stranger.privateKey, first.ephemeral_key)}` });
    expect(wrong.status).toBe(400);
    const opened = await send(base, 'POST', `/i/${inboxId}`, { headers: FORM, body: `submission=1&key_check=${await keyCheckFor(pair.privateKey, first.ephemeral_key)}` });
    expect(opened.status).toBe(200);
    const envelope = /data-request-envelope="([^"]+)"/.exec(opened.text)![1]!;
    await expect(openFrom(pair.privateKey, first.ephemeral_key, envelope)).resolves.toBe('first secret');
    expect(opened.text).not.toContain('first secret');
    const again = await send(base, 'POST', `/i/${inboxId}`, { headers: FORM, body: `submission=1&key_check=${await keyCheckFor(pair.privateKey, first.ephemeral_key)}` });
    expect(again.status).toBe(410);
    const after = await send(base, 'GET', `/api/inbox/${inboxId}.php`);
    expect(after.json.submissions.map((item: { state: string }) => item.state)).toEqual(['opened', 'waiting', 'waiting']);
  });

  it('when the input is bad, then each answer is a clear 4xx and nothing is stored', async () => {
    const before = await counts();
    const pair = await newKeyPair();
    const create = (body: Record<string, unknown>) => send(base, 'POST', '/api/request.php', { headers: JSON_HEADERS, body: JSON.stringify(body) });
    expect((await create({ public_key: 'not-a-key', label: 'x' })).json.code).toBe('INVALID_PUBLIC_KEY');
    expect((await create({ public_key: Buffer.alloc(32).toString('base64url'), label: 'x' })).json.code).toBe('INVALID_PUBLIC_KEY');
    expect((await create({ public_key: pair.publicKey, label: 'x'.repeat(501) })).json.code).toBe('LABEL_TOO_LONG');
    expect((await create({ public_key: pair.publicKey, label: 'x', max_submissions: 1001 })).json.code).toBe('INVALID_MAX_SUBMISSIONS');
    expect((await create({ public_key: pair.publicKey, label: 'x', open_days: 91 })).json.code).toBe('INVALID_OPEN_DAYS');
    expect((await create({ public_key: pair.publicKey, label: 'x', allowed_origins: ['https://a.example/path'] })).json.code).toBe('INVALID_ALLOWED_ORIGINS');
    const unknown = await submit('A'.repeat(43), { content: (await sealTo(pair.publicKey, 'x')).content, key_check: 'A'.repeat(43) });
    expect([unknown.status, unknown.json.code]).toEqual([404, 'REQUEST_NOT_FOUND']);
    expect((await send(base, 'GET', '/api/inbox/nope.php')).status).toBe(404);
    const { requestId } = await makeRequest();
    const sealed = await sealTo(pair.publicKey, 'x');
    const notSealed = await submit(requestId, { content: sealed.content.replace(/^vr1\.[^.]+\./, 'vz1.'), key_check: sealed.keyCheck });
    expect([notSealed.status, notSealed.json.code]).toEqual([400, 'INVALID_CONTENT']);
    expect((await submit(requestId, { content: sealed.content, key_check: 'short' })).json.code).toBe('INVALID_KEY_CHECK');
    const after = await counts();
    expect(after).toEqual({ ...before, requests: before.requests + 1 });
  });

  it('when a request allows files, then an answer declares them, gets its uploads, and the inbox opens it with download addresses whose bytes open to the same file; refused (nothing stored) where files are not allowed', async () => {
    const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
    /** An answer with one file, sealed as the sender's page and `vanish send --attach` seal it. */
    const sealWithFile = async (publicKey: string, text: string, plain: Buffer) => {
      const noteKey = await newNoteKeyTo(publicKey);
      const entry = fileStream.newFileEntry('report ✓.pdf', 'application/pdf', plain.length);
      const sealer = fileStream.createSealer(noteKey.key, entry.nonce);
      const sealedFile = Buffer.concat([...(await sealer.push(plain)), ...(await sealer.finish())]);
      const content = requestEnvelope(noteKey.ephemeralPublicKey, await fileStream.sealManifest(text, [entry], noteKey.key));
      return { body: { content, key_check: await keyCheck(noteKey.key), files: [{ size: sealedFile.length }] }, sealedFile };
    };
    const plain = randomBytes(70_000); // two segments
    const noteFiles = async () => Number(((await service.knex('note_files').count({ n: '*' })) as Array<{ n: number | string }>)[0]!.n);

    // Not allowed: 400 in the error shape, and nothing is stored (no slot, no note, no upload).
    const textOnly = await makeRequest();
    const before = { ...(await counts()), files: await noteFiles() };
    const refused = await submit(textOnly.requestId, (await sealWithFile(textOnly.pair.publicKey, 'x', plain)).body);
    expect([refused.status, refused.json.code, refused.json.details?.parameter]).toEqual([400, 'FILES_NOT_ALLOWED', 'files']);
    const tooMany = await makeRequest({ allow_files: true });
    const many = (await sealWithFile(tooMany.pair.publicKey, 'x', plain)).body;
    const overCount = await submit(tooMany.requestId, { ...many, files: Array.from({ length: 21 }, () => ({ size: 100 })) });
    expect([overCount.status, overCount.json.code]).toEqual([400, 'INVALID_FILES']);
    expect((await submit(tooMany.requestId, { ...many, files: [{ size: 0 }] })).json.code).toBe('INVALID_FILES');
    expect({ ...(await counts()), files: await noteFiles() }).toEqual({ ...before, requests: before.requests + 1 });
    expect((await send(base, 'GET', `/api/inbox/${tooMany.inboxId}.php`)).json.submissions).toEqual([]);

    // Allowed: the answer's uploads are pre-created as a note's, and it opens only once they are complete.
    const { pair, requestId, inboxId } = await makeRequest({ allow_files: true });
    expect((await send(base, 'GET', `/api/request/${requestId}.php`)).json.allow_files).toBe(true);
    const answer = await sealWithFile(pair.publicKey, 'the contract, signed', plain);
    const done = await submit(requestId, answer.body);
    expect(done.status).toBe(200);
    expect(done.json.uploads).toEqual([{ url: expect.stringMatching(/\/files\/uploads\/[A-Za-z0-9_-]{43}$/), size: answer.sealedFile.length }]);
    const listed = await send(base, 'GET', `/api/inbox/${inboxId}.php`);
    const item = listed.json.submissions[0] as { size: number; ephemeral_key: string; state: string };
    expect([item.state, item.size]).toEqual(['waiting', answer.body.content.length - 44 + answer.sealedFile.length]);
    const check = await keyCheckFor(pair.privateKey, item.ephemeral_key);
    const early = await send(base, 'POST', `/i/${inboxId}`, { headers: FORM, body: `submission=1&key_check=${check}`, unchecked: true });
    expect(early.status).toBe(409); // still being uploaded: nothing claimed
    const uploadPath = new URL(done.json.uploads[0].url as string).pathname;
    const patched = await send(base, 'PATCH', uploadPath, {
      headers: { 'tus-resumable': '1.0.0', 'content-type': 'application/offset+octet-stream', 'upload-offset': '0' }, body: answer.sealedFile, unchecked: true,
    });
    expect(patched.status).toBe(204);

    const opened = await send(base, 'POST', `/i/${inboxId}`, { headers: FORM, body: `submission=1&key_check=${check}` });
    expect(opened.status).toBe(200);
    const envelope = /data-request-envelope="([^"]+)"/.exec(opened.text)![1]!;
    const downloads = [...opened.text.matchAll(/<li data-download="([^"]+)" data-size="(\d+)">/g)].map((match) => ({ url: match[1]!, size: Number(match[2]) }));
    expect(downloads).toEqual([{ url: expect.stringMatching(/\/files\/d\/[A-Za-z0-9_-]{43}$/), size: answer.sealedFile.length }]);
    const key = await noteKeyFor(pair.privateKey, item.ephemeral_key);
    const note = await fileStream.openNote(envelope, key);
    expect(note.text).toBe('the contract, signed');
    expect(note.files!.map((file) => [file.name, file.size])).toEqual([['report ✓.pdf', plain.length]]);
    const download = await fetch(`${base}${new URL(downloads[0]!.url).pathname}`);
    expect(download.status).toBe(200);
    const opener = fileStream.createOpener(key, note.files![0]!.nonce, note.files![0]!.size);
    const got = Buffer.concat([...(await opener.push(new Uint8Array(await download.arrayBuffer()))), ...(await opener.finish())]);
    expect(sha256(got)).toBe(sha256(plain));
    expect(opened.text).not.toContain('the contract');
    expect(opened.text).not.toContain('report');
    expect((await send(base, 'GET', `/api/inbox/${inboxId}.php`)).json.submissions[0].state).toBe('opened');
  });

  it('when a third person holds only the request link, then they see the label and a form, and no way to list, open or consume anything', async () => {
    const { pair, requestId, inboxId } = await makeRequest();
    const sealed = await sealTo(pair.publicKey, 'the secret');
    expect((await submit(requestId, { content: sealed.content, key_check: sealed.keyCheck })).status).toBe(200);
    const page = await send(base, 'GET', `/q/${requestId}`, { unchecked: true });
    expect(page.status).toBe(410); // count 1 reached: the form is gone
    expect(page.text).not.toContain(inboxId);
    // The request id is no inbox id, and the inbox's key proof cannot be made without the private key.
    expect((await send(base, 'GET', `/api/inbox/${requestId}.php`)).status).toBe(404);
    expect((await send(base, 'POST', `/i/${requestId}`, { headers: FORM, body: `submission=1&key_check=${sealed.keyCheck.replace(/.$/, 'A')}` })).status).toBe(404);
    const inbox = await send(base, 'GET', `/api/inbox/${inboxId}.php`);
    expect(inbox.json.submissions[0].state).toBe('waiting');
  });

  it('when the inbox closes its request, then submissions are 410 and the inbox says closed; only the embedded form may be framed, by its allowed origins', async () => {
    const framed = await makeRequest({ max_submissions: 5, allowed_origins: ['http://127.0.0.1:4000', 'https://shop.example'] });
    const embed = await send(base, 'GET', `/embed/q/${framed.requestId}`, { unchecked: true });
    expect(embed.status).toBe(200);
    expect(embed.headers['content-security-policy']).toContain('frame-ancestors http://127.0.0.1:4000 https://shop.example');
    expect(embed.headers['x-frame-options']).toBeUndefined();
    const plain = await makeRequest();
    expect((await send(base, 'GET', `/embed/q/${plain.requestId}`, { unchecked: true })).headers['content-security-policy']).toContain("frame-ancestors 'none'");
    for (const path of [`/q/${framed.requestId}`, `/i/${framed.inboxId}`, '/request']) {
      const answer = await send(base, 'GET', path, { unchecked: true });
      expect([path, answer.status, answer.headers['x-frame-options'], answer.headers['content-security-policy']]).toEqual([path, 200, 'DENY', expect.stringContaining("frame-ancestors 'none'")]);
    }
    const script = await send(base, 'GET', '/assets/embed.js', { unchecked: true });
    expect([script.headers['access-control-allow-origin'], script.headers['cross-origin-resource-policy']]).toEqual(['*', 'cross-origin']);

    const closed = await send(base, 'POST', `/i/${framed.inboxId}/close`, { headers: FORM, body: '', unchecked: true });
    expect([closed.status, closed.headers.location]).toEqual([303, `/i/${framed.inboxId}`]);
    const sealed = await sealTo(framed.pair.publicKey, 'late');
    expect((await submit(framed.requestId, { content: sealed.content, key_check: sealed.keyCheck })).status).toBe(410);
    expect((await send(base, 'GET', `/api/inbox/${framed.inboxId}.php`)).json.status).toBe('closed');
  });

  it('when the database is read after all this, then it holds no request or inbox id, no private key and no text', async () => {
    const { pair, requestId, inboxId } = await makeRequest({ notification_email: 'someone@example.com' });
    const sealed = await sealTo(pair.publicKey, 'canary plaintext 5f3a');
    expect((await submit(requestId, { content: sealed.content, key_check: sealed.keyCheck })).status).toBe(200);
    const dump = JSON.stringify(await Promise.all(['requests', 'request_submissions', 'notes', 'outbox', 'receipts'].map((table) => service.knex(table).select('*'))), (_key, value) =>
      (value && value.type === 'Buffer' ? Buffer.from(value.data).toString('latin1') : value));
    for (const secret of [requestId, inboxId, pair.privateKey, 'canary plaintext', 'someone@example.com', 'Your VPN password']) expect(dump).not.toContain(secret);
  });
});

describe('requests over time', () => {
  let dataDir: string;
  let service: NotesService;
  let base: string;
  const clock = new ManualClock(new Date());

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'notes-requests-time-'));
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`, PUBLIC_BASE_URL: 'http://127.0.0.1:1', NOTE_RETENTION_HOURS: '24', SWEEP_INTERVAL_MS: '200',
    });
    service = await createNotesService(config, { logger: silentLogger, kdf: { N: 1024, r: 8, p: 1 }, clock });
    base = `http://127.0.0.1:${(await service.start()).port}`;
  });

  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when an answer\'s note expires and then the request\'s date passes, then the inbox says expired, answers are 410, and the request is purged once nothing of it lives', async () => {
    const pair = await newKeyPair();
    const made = await send(base, 'POST', '/api/request.php', {
      headers: JSON_HEADERS, body: JSON.stringify({ public_key: pair.publicKey, label: 'x', open_days: 2, max_submissions: 5, expiry_type: 'time', expiry_time: 1 }),
    });
    const requestId = new URL(made.json.request_url as string).pathname.slice(3);
    const inboxId = new URL(made.json.inbox_url as string).pathname.slice(3);
    const sealed = await sealTo(pair.publicKey, 'soon gone');
    expect((await send(base, 'POST', `/api/request/${requestId}.php`, { headers: JSON_HEADERS, body: JSON.stringify({ content: sealed.content, key_check: sealed.keyCheck }) })).status).toBe(200);

    clock.advance(2 * 3_600_000); // the answer's one hour is over
    const listed = await send(base, 'GET', `/api/inbox/${inboxId}.php`);
    expect([listed.json.status, listed.json.submissions[0].state]).toEqual(['open', 'expired']);
    const check = await keyCheckFor(pair.privateKey, listed.json.submissions[0].ephemeral_key);
    expect((await send(base, 'POST', `/i/${inboxId}`, { headers: FORM, body: `submission=1&key_check=${check}`, unchecked: true })).status).toBe(410);

    clock.advance(2 * 86_400_000); // the request's two days are over
    expect((await send(base, 'GET', `/api/inbox/${inboxId}.php`)).json.status).toBe('expired');
    const late = await sealTo(pair.publicKey, 'late');
    const refused = await send(base, 'POST', `/api/request/${requestId}.php`, { headers: JSON_HEADERS, body: JSON.stringify({ content: late.content, key_check: late.keyCheck }) });
    expect([refused.status, refused.json.code]).toEqual([410, 'REQUEST_CLOSED']);

    // A retention (24 h here) after its date, with its answer's note swept: the request goes, rows and all.
    clock.advance(25 * 3_600_000);
    const rows = async (table: string) => Number(((await service.knex(table).count({ n: '*' })) as Array<{ n: number | string }>)[0]!.n);
    await waitFor(async () => (await rows('requests')) === 0, { timeoutMs: 30_000, intervalMs: 200, description: 'the request purged' });
    expect(await rows('request_submissions')).toBe(0);
    expect((await send(base, 'GET', `/api/inbox/${inboxId}.php`)).status).toBe(404);
  });
});

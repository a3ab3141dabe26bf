import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import amqp from 'amqplib';
import fc from 'fast-check';
import { checkApiAnswer } from '@vanish/testkit/openapi';
import { runProcess } from '@vanish/testkit/process';
import { waitFor } from '@vanish/testkit/net';
import { RABBITMQ_URL } from '@vanish/testkit/rabbitmq';
import { keyCheck, newKey, seal } from '@vanish/envelope';
import { startSystem, unescapeHtml, type Answer, type System } from './support/system';
import { startReceiver, verifySignature } from '../../services/webhooks/test/support/receiver';
import { keyCheckFor, newKeyPair, openFrom, sealTo } from '@vanish/envelope/request-seal';

// Attacks and bad input against the four services as separate processes (needs `npm run build`):
// never a 500, always the SPEC 7 error body (every API answer is checked against the OpenAPI
// document by sys.api), and a canary that must never leak into logs, queues, metrics or databases.
jest.setTimeout(180_000);

const CANARY = 'zq7canary4x9';
const SPEC7 = { error: expect.any(String), code: expect.any(String), details: { parameter: expect.anything(), message: expect.any(String) } };
const FIELDS = ['content', 'expiry_type', 'expiry_time', 'max_views', 'passcode', 'notification_email', 'send_link_email'] as const;
const ROOT = path.resolve(__dirname, '../..');

function expectClientErrorOrOk(answer: Answer): void {
  expect([200, 400]).toContain(answer.status);
  if (answer.status !== 400) return;
  expect(answer.body).toEqual(SPEC7);
  expect([null, ...FIELDS]).toContain(answer.body.details.parameter);
}

/** A request with a hand-made body (chunked when `chunks` is given), for what fetch will not send. */
function rawPost(sys: System, urlPath: string, headers: Record<string, string>, chunks: Buffer[]): Promise<{ status: number; text: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${sys.gateway}${urlPath}`, { method: 'POST', headers }, (response) => {
      const parts: Buffer[] = [];
      response.on('data', (part: Buffer) => parts.push(part));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(parts).toString('utf8'), headers: response.headers }));
    });
    request.on('error', reject);
    request.setTimeout(20_000, () => request.destroy(new Error('timeout')));
    (async () => {
      for (const chunk of chunks) {
        if (!request.write(chunk)) await new Promise((r) => request.once('drain', r));
      }
      request.end();
    })().catch(() => undefined);
  });
}

function runWithStdin(script: string, input: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('error', reject);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, output }); });
    child.stdin.end(input);
  });
}

function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

function checkRaw(answer: { status: number; text: string; headers: http.IncomingHttpHeaders }): void {
  const headers = new Headers(Object.entries(answer.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)]));
  checkApiAnswer({ method: 'POST', path: '/api/create.php', status: answer.status, headers, body: JSON.parse(answer.text) });
}

describe('attacks: bad input never breaks the promises', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it('when every API field gets wrong types and boundary values, then the answer is 200 or a 400 naming the field, never a 500', async () => {
    const boundary = fc.constantFrom<unknown>(0, 1, 100, 101, 8760, 8761, -1, 1.5, 1e21, '1', '', ' ', null, true, [], {}, 'view', 'time', 'both', 'VIEW', 'a'.repeat(10_001), 'x@y.zz', 'a@b.c\r\nBcc: x@evil.test', '"x"@y.zz', 'x'.repeat(129));
    const value = fc.oneof(boundary, fc.anything(), fc.string(), fc.integer({ min: -1e6, max: 1e6 }), fc.double());
    for (const field of FIELDS) {
      await fc.assert(fc.asyncProperty(value, async (v) => {
        const body = field === 'content' ? { content: v } : { content: 'fuzz', [field]: v };
        const answer = await sys.create(body as Record<string, unknown>);
        expectClientErrorOrOk(answer);
        if (answer.status === 400) expect(answer.body.details.parameter).toBe(field);
      }), { numRuns: 25 });
    }
  });

  it('when content holds NUL, RTL overrides, combining marks, lone surrogates or any unicode, then it round-trips byte-identical through the web reveal or is refused with 400', async () => {
    const special = fc.constantFrom('\0', '\u202e', '\u202d', 'e\u0301', '\u0000\u0000', '\ud800', '\udfff', '\ud83d\ude00', '\r\n', '<b>&amp;</b>', '\ufeff', '\u2028');
    const text = fc.array(fc.oneof(special, fc.fullUnicode(), fc.string({ maxLength: 5 })), { minLength: 1, maxLength: 12 }).map((parts) => parts.join(''));
    await fc.assert(fc.asyncProperty(text, async (content) => {
      const created = await sys.create({ content });
      expectClientErrorOrOk(created);
      if (created.status !== 200) return;
      const shown = await sys.reveal(created.body.uuid);
      expect(shown.status).toBe(200);
      expect(Buffer.from(shown.content ?? '', 'utf8').equals(Buffer.from(content, 'utf8'))).toBe(true);
      expect(shown.content).toBe(content); // a lone surrogate must not be silently replaced
    }), { numRuns: 30, examples: [['\ud800'], ['a\udfffb'], ['x\0y'], ['\u202eabc'], ['e\u0301'], ['\ud83d\ude00'], ['\r\n<script>'], ['\0']] });
  });

  it('when the body is 10k levels deep, pollutes prototypes or assigns server fields, then it is refused or ignored', async () => {
    const deep = `{"content":"x","a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`;
    const deepAnswer = await sys.raw('POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body: deep });
    expect([200, 400]).toContain(deepAnswer.status);
    const deepObject = `{"content":"x","a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`;
    const deepObjectAnswer = await sys.raw('POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body: deepObject });
    expect([200, 400]).toContain(deepObjectAnswer.status);

    for (const body of [
      '{"content":"x","__proto__":{"max_views":50,"has_passcode":true}}',
      '{"content":"x","constructor":{"prototype":{"max_views":50}}}',
      '{"__proto__":{"content":"polluted"}}',
    ]) {
      const answer = await sys.raw('POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body });
      checkApiAnswer({ method: 'POST', path: '/api/create.php', status: answer.status, headers: answer.headers, body: answer.body });
      expect([200, 400]).toContain(answer.status);
      if (answer.status === 200) expect(answer.body).toMatchObject({ max_views: 1, has_passcode: false });
    }
    const plain = await sys.create({ content: 'after pollution' });
    expect(plain.body).toMatchObject({ max_views: 1, has_passcode: false });

    const assigned = await sys.create({ content: 'mass', current_views: 5, is_destroyed: true, uuid: '00000000-0000-4000-8000-000000000000', created_at: '2000-01-01 00:00:00', max_views: 2 });
    expect(assigned.status).toBe(200);
    expect(assigned.body.uuid).not.toBe('00000000-0000-4000-8000-000000000000');
    const meta = await sys.api('GET', `/api/view/${assigned.body.uuid}.php`);
    expect(meta.body.note).toMatchObject({ current_views: 0, is_destroyed: false, max_views: 2 });
    expect(meta.body.note.created_at).not.toBe('2000-01-01 00:00:00');
  });

  it('when bodies are 10 MB, chunked or a gzip bomb, then the answer is a 400 in the SPEC 7 shape and the service stays up', async () => {
    const big = Buffer.from(JSON.stringify({ content: 'x'.repeat(10 * 1024 * 1024) }));
    const tooBig = await rawPost(sys, '/api/create.php', { 'content-type': 'application/json', 'content-length': String(big.length) }, [big]).catch((err: Error) => ({ status: -1, text: err.message, headers: {} }));
    // The server may answer before reading it all and close; either way no 5xx and no hang.
    if (tooBig.status !== -1) {
      expect(tooBig.status).toBe(400);
      checkRaw(tooBig);
    }
    const chunkedBig = await rawPost(sys, '/api/create.php', { 'content-type': 'application/json' }, Array.from({ length: 40 }, () => Buffer.alloc(256 * 1024, 0x61)))
      .catch((err: Error) => ({ status: -1, text: err.message, headers: {} }));
    if (chunkedBig.status !== -1) {
      expect(chunkedBig.status).toBe(400);
      checkRaw(chunkedBig);
    }
    const small = JSON.stringify({ content: 'chunked ok', max_views: 2 });
    const chunked = await rawPost(sys, '/api/create.php', { 'content-type': 'application/json' }, [Buffer.from(small.slice(0, 10)), Buffer.from(small.slice(10))]);
    expect(chunked.status).toBe(200);
    checkRaw(chunked);
    sys.created.set(JSON.parse(chunked.text).uuid, { maxViews: 2, shown: 0 });

    const bomb = gzipSync(Buffer.concat([Buffer.from('{"content":"'), Buffer.alloc(50 * 1024 * 1024, 0x61), Buffer.from('"}')]));
    const bombed = await rawPost(sys, '/api/create.php', { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(bomb.length) }, [bomb]);
    expect(bombed.status).toBe(400);
    checkRaw(bombed);
    expect((await sys.create({ content: 'still up' })).status).toBe(200);
  });

  it('when hostile uuids are put in paths, then the answer is 404 or 400 and never reflects the input', async () => {
    const existing = await sys.create({ content: 'upper' });
    const hostile = [
      '..%2F..%2Fetc%2Fpasswd', '%2e%2e%2f%2e%2e%2fetc%2fpasswd', encodeURIComponent("' OR 1=1 --"), encodeURIComponent('1;DROP TABLE notes'),
      encodeURIComponent('<script>alert(1)</script>'), encodeURIComponent('"><img src=x onerror=alert(1)>'), 'a'.repeat(10 * 1024), '%00',
      `${existing.body.uuid}%00`, existing.body.uuid.toUpperCase(), `${existing.body.uuid}x`, '00000000-0000-4000-8000-000000000000',
    ];
    for (const id of hostile) {
      const decoded = (() => { try { return decodeURIComponent(id); } catch { return id; } })();
      const api = await sys.api('GET', `/api/view/${id}.php`);
      expect([400, 404]).toContain(api.status);
      const page = await sys.raw('GET', `/${id}`);
      expect([400, 404]).toContain(page.status);
      for (const answer of [api, page]) {
        if (decoded.length > 3) {
          expect(answer.text).not.toContain(decoded);
          expect(answer.text).not.toContain(id);
        }
      }
    }
    const meta = await sys.api('GET', `/api/view/${existing.body.uuid}.php`);
    expect(meta.body.note.current_views).toBe(0);
  });

  it('when a note is unknown, destroyed or expired, then the metadata read and the note page answer the same', async () => {
    const unknown = '6a2f41a0-3b7c-4d9e-8f10-2a3b4c5d6e7f';
    const destroyed = await sys.create({ content: 'read once' });
    expect((await sys.reveal(destroyed.body.uuid)).status).toBe(200);
    const expired = await sys.create({ content: 'expire me', expiry_type: 'time', expiry_time: 1 });
    // Time travel in the database: the newest row is the note just created.
    await sys.sql('notes', 'UPDATE notes SET expires_at = ? ORDER BY created_at DESC LIMIT 1', [Date.now() - 1000]);
    const answers = [];
    for (const uuid of [unknown, destroyed.body.uuid, expired.body.uuid]) {
      const api = await sys.api('GET', `/api/view/${uuid}.php`);
      const page = await sys.raw('GET', `/${uuid}`);
      answers.push({ api: { status: api.status, body: api.body }, page: { status: page.status, body: page.text } });
    }
    expect(answers[0]!.api.status).toBe(404);
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
  });

  it('when a passcode is brute-forced from rotating addresses, then the note locks out after 5 failures and failures never count as views', async () => {
    const note = await sys.create({ content: 'guarded', passcode: 'correct horse', max_views: 3 });
    for (let attempt = 1; attempt <= 5; attempt++) {
      const headers = { 'x-forwarded-for': `203.0.113.${attempt}` };
      const answer = await sys.reveal(note.body.uuid, `wrong ${attempt}`, headers);
      expect(answer.content).toBeUndefined();
      if (attempt < 5) {
        expect(answer.status).toBe(400);
        const meta = await sys.api('GET', `/api/view/${note.body.uuid}.php`, undefined, headers);
        expect(meta.body.note.current_views).toBe(0);
      }
    }
    expect((await sys.api('GET', `/api/view/${note.body.uuid}.php`)).status).toBe(404);
    expect((await sys.reveal(note.body.uuid, 'correct horse')).content).toBeUndefined();
  });

  it('when a reveal is posted cross-site, then it is refused with 403 and no view is consumed; link-preview bots consume nothing', async () => {
    const note = await sys.create({ content: 'csrf target', max_views: 2 });
    const uuid = note.body.uuid;
    // What browsers send for a form posted from another site (Sec-Fetch-Site cannot be set by a page).
    const crossSite: Array<Record<string, string>> = [
      { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }, { 'sec-fetch-site': 'same-site', origin: 'https://sub.evil.example' },
      { 'sec-fetch-site': 'cross-site', origin: sys.gateway }, { 'sec-fetch-site': 'cross-site' }, { origin: 'https://evil.example' },
    ];
    for (const headers of crossSite) {
      const page = await sys.raw('GET', `/${uuid}`);
      const token = /name="form_token" value="([^"]+)"/.exec(page.text)![1]!;
      const answer = await sys.raw('POST', `/${uuid}`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams({ form_token: token }).toString(),
      });
      expect(answer.status).toBe(403);
      expect(answer.text).not.toContain('csrf target');
    }
    for (const agent of ['Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)', 'facebookexternalhit/1.1', 'TelegramBot (like TwitterBot)']) {
      for (const method of ['GET', 'HEAD']) {
        const answer = await sys.raw(method, `/${uuid}`, { headers: { 'user-agent': agent } });
        expect(answer.status).toBe(200);
        expect(answer.text).not.toContain('csrf target');
      }
    }
    expect((await sys.api('GET', `/api/view/${uuid}.php`)).body.note.current_views).toBe(0);
    expect((await sys.reveal(uuid)).content).toBe('csrf target');
  });

  it('when one ciphertext byte is flipped in the database, then the reveal fails closed and the view is not consumed', async () => {
    const note = await sys.create({ content: 'tamper with me', max_views: 2 });
    const [row] = await sys.sql('notes', 'SELECT lookup, content_box FROM notes ORDER BY created_at DESC LIMIT 1');
    const box = Buffer.from(row.content_box as Buffer);
    box[Math.floor(box.length / 2)] ^= 0x01;
    await sys.sql('notes', 'UPDATE notes SET content_box = ? WHERE lookup = ?', [box, row.lookup]);
    sys.allow5xx = true; // DECISIONS 1: a row that was tampered with answers 500
    const answer = await sys.reveal(note.body.uuid);
    sys.allow5xx = false;
    expect(answer.status).toBe(500); // fails closed: an error page, not the content, not a 404 that would hide the tampering
    expect(answer.content).toBeUndefined();
    expect(answer.text).not.toContain('tamper with me');
    expect(answer.text).not.toMatch(/\bat [\w.<>]+ \(|\.js:\d+|GCM|decipher|auth(entication)? tag/i);
    expect((await sys.api('GET', `/api/view/${note.body.uuid}.php`)).body.note.current_views).toBe(0);
  });

  it('when an operator runs the takedown command with a link, then the note is destroyed, note.destroyed reason takedown is emitted, and no uuid is logged', async () => {
    const note = await sys.create({ content: 'reported', max_views: 3 });
    const statsBefore = await sys.checkInvariants().then(() => sys.stats());
    const takedown = path.join(ROOT, 'services/notes/dist/cli/takedown.js');
    const first = await runProcess({ script: takedown, args: [note.body.url], env: sys.serviceEnv('notes'), readyTimeoutMs: 30_000 });
    const firstExit = await first.exited;
    expect(firstExit.code).toBe(0);
    expect(first.output()).not.toContain(note.body.uuid);
    expect((await sys.api('GET', `/api/view/${note.body.uuid}.php`)).status).toBe(404);
    await waitFor(() => sys.busMessages.find((m) => m.routingKey === 'note.destroyed' && JSON.parse(m.body).data?.reason === 'takedown'), { timeoutMs: 10_000, description: 'note.destroyed with reason takedown on the bus' });
    const second = await runProcess({ script: takedown, args: [note.body.uuid], env: sys.serviceEnv('notes') });
    expect((await second.exited).code).toBe(1);
    expect(second.output()).not.toContain(note.body.uuid);
    // The link on stdin (the way docs/security.md recommends: out of the process list and shell history).
    const viaStdin = await sys.create({ content: 'reported on stdin' });
    // (Not spawnSync: the database's fault proxy runs in this process and must keep forwarding.)
    const piped = await runWithStdin(takedown, `${viaStdin.body.url}\n`, definedOnly(sys.serviceEnv('notes')));
    expect(piped.code).toBe(0);
    expect(piped.output).toContain('takedown: the note was destroyed');
    expect(piped.output).not.toContain(viaStdin.body.uuid);
    expect((await sys.api('GET', `/api/view/${viaStdin.body.uuid}.php`)).status).toBe(404);
    await sys.checkInvariants();
    const statsAfter = await sys.stats();
    expect(statsAfter.destroyed_notes).toBe(statsBefore.destroyed_notes + 2);
  });

  it('when a canary is used as content, passcode, e-mail local-part, webhook URL path and a request\'s label and answer (and a note carries a file), and the file tokens, the request and inbox ids and private key are looked for, then none appears in logs, RabbitMQ payloads, dead letters (webhook ones included), metrics or any database column', async () => {
    const email = `${CANARY}@example.com`;
    const receiver = await startReceiver();
    const note = await sys.create({
      content: `${CANARY} the secret`, passcode: CANARY, notification_email: email, send_link_email: email, max_views: 2,
      webhook_url: receiver.url(`/${CANARY}/hook`),
    });
    expect(note.status).toBe(200);
    const secret = String(note.body.webhook_secret);
    expect(secret).toMatch(/^whsec_/);
    // A webhook that answers 500 to everything: its events go through every retry into the dead-letter queue.
    const refusing = await startReceiver();
    refusing.setMode({ kind: 'status', status: 500 });
    const doomed = await sys.create({ content: `${CANARY} doomed`, webhook_url: refusing.url(`/${CANARY}/doomed`) });
    expect(doomed.status).toBe(200);
    const plain = await sys.create({ content: `${CANARY} plain`, send_link_email: `x.${CANARY}@example.com` });
    await sys.create({ content: `${CANARY} bad`, max_views: 0 });
    await sys.create({ content: 'x', notification_email: `${CANARY}@@bad` });
    expect((await sys.reveal(note.body.uuid, `${CANARY}-wrong`)).content).toBeUndefined();
    expect((await sys.reveal(note.body.uuid, CANARY)).content).toBe(`${CANARY} the secret`);
    expect((await sys.reveal(plain.body.uuid)).content).toBe(`${CANARY} plain`);
    expect((await sys.reveal(doomed.body.uuid)).content).toBe(`${CANARY} doomed`);
    // DECISIONS 14: a note with a file, uploaded and downloaded (on the notes service itself); its upload and
    // download tokens are bearer secrets, looked for below as the uuid is.
    const fileKey = newKey();
    const withFile = await sys.create({ client_encrypted: true, content: await seal(`${CANARY} with a file`, fileKey), key_check: await keyCheck(fileKey), files: [{ size: 32 }] });
    expect(withFile.status).toBe(200);
    const notesDirect = `http://127.0.0.1:${sys.serviceEnv('notes').PORT}`;
    const uploadPath = new URL((withFile.body as { uploads: Array<{ url: string }> }).uploads[0]!.url).pathname;
    const tus = { 'tus-resumable': '1.0.0' };
    expect((await fetch(`${notesDirect}${uploadPath}`, { method: 'PATCH', headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: randomBytes(32) })).status).toBe(204);
    expect((await fetch(`${notesDirect}${uploadPath}`, { method: 'PATCH', headers: { ...tus, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' }, body: randomBytes(1) })).status).toBe(409);
    const filePage = await sys.raw('GET', `/${withFile.body.uuid}`);
    const fileForm = new URLSearchParams({ form_token: /name="form_token" value="([^"]+)"/.exec(filePage.text)![1]!, key_check: await keyCheck(fileKey) });
    const fileRevealed = await sys.raw('POST', `/${withFile.body.uuid}`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', origin: sys.gateway }, body: fileForm.toString(),
    });
    expect(fileRevealed.status).toBe(200);
    const downloadPath = new URL(unescapeHtml(/data-download="([^"]+)"/.exec(fileRevealed.text)![1]!)).pathname;
    expect((await fetch(`${notesDirect}${downloadPath}`)).status).toBe(200);
    expect((await fetch(`${notesDirect}${downloadPath}`, { headers: { range: 'bytes=40-' } })).status).toBe(416);
    const fileTokens = [uploadPath, downloadPath].map((filePath) => filePath.split('/').pop()!);
    expect(fileTokens.every((token) => /^[A-Za-z0-9_-]{43}$/.test(token))).toBe(true);
    // note.accessed and note.destroyed of the doomed note, each after its last attempt (retry delays 300 and 1000 ms
    // here), taken out of the dead-letter queue for the look below (and so that the invariants find it empty).
    const webhookDeadLetters: string[] = [];
    const broker = await amqp.connect(RABBITMQ_URL);
    try {
      const channel = await broker.createChannel();
      await waitFor(async () => {
        const message = await channel.get(`${sys.tag}.webhooks.note-events.dlq`, { noAck: true });
        if (message) webhookDeadLetters.push(message.content.toString('utf8'));
        return webhookDeadLetters.length >= 2;
      }, { timeoutMs: 90_000, intervalMs: 250, description: 'two webhook dead letters' });
    } finally {
      await broker.close();
    }
    // DECISIONS 15: a request whose label, e-mail, webhook path and answer carry the canary; its ids and private key
    // are looked for below too.
    const pair = await newKeyPair();
    const requestHooks = await startReceiver();
    const made = await sys.api('POST', '/api/request.php', {
      public_key: pair.publicKey, label: `${CANARY} label`, notification_email: `r.${CANARY}@example.com`, webhook_url: requestHooks.url(`/${CANARY}/request`),
    });
    expect(made.status).toBe(200);
    const requestId = new URL(String(made.body.request_url)).pathname.slice(3);
    const inboxId = new URL(String(made.body.inbox_url)).pathname.slice(3);
    const sealed = await sealTo(pair.publicKey, `${CANARY} answer`);
    expect((await sys.api('POST', `/api/request/${requestId}.php`, { content: sealed.content, key_check: sealed.keyCheck })).status).toBe(200);
    sys.created.set('the request\'s submission (a note whose uuid the test never sees)', { maxViews: 1, shown: 1 });
    const listed = await sys.api('GET', `/api/inbox/${inboxId}.php`);
    const ephemeral = String(listed.body.submissions[0].ephemeral_key);
    const opened = await sys.raw('POST', `/i/${inboxId}`, {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `submission=1&key_check=${await keyCheckFor(pair.privateKey, ephemeral)}`,
    });
    expect(opened.status).toBe(200);
    const envelope = /data-request-envelope="([^"]+)"/.exec(String(opened.body))![1]!;
    await expect(openFrom(pair.privateKey, ephemeral, envelope)).resolves.toBe(`${CANARY} answer`);
    // request.submitted, then the answer's note.accessed and note.destroyed (one view): all three before the receiver goes.
    await waitFor(() => requestHooks.received.length >= 3, { timeoutMs: 30_000, description: 'request.submitted, note.accessed and note.destroyed' });
    expect(requestHooks.received.map((r) => r.payload.event).sort()).toEqual(['note.accessed', 'note.destroyed', 'request.submitted']);
    expect(requestHooks.received.every((r) => verifySignature(String(made.body.webhook_secret), r) && !JSON.stringify(r.payload).includes(requestId))).toBe(true);
    await requestHooks.close();
    expect(refusing.received.length).toBeGreaterThanOrEqual(6);
    await refusing.close();
    await sys.checkInvariants();
    await sys.sink.waitForMessages(4, 30_000); // link, link, read notification, request answer: the mail really went out
    // The webhook really went out too: failed access, accessed (DECISIONS 11), to the receiver alone.
    await waitFor(() => receiver.received.length >= 2, { timeoutMs: 30_000, description: 'webhook deliveries' });
    expect(receiver.received.every((r) => verifySignature(secret, r) && r.payload.data.note_id === note.body.uuid)).toBe(true);
    await receiver.close();

    const leaks: string[] = [];
    const look = (where: string, text: string) => {
      if (text.toLowerCase().includes(CANARY)) leaks.push(where);
      if (text.includes(note.body.uuid)) leaks.push(`${where} (uuid)`);
      for (const key of [secret, String(doomed.body.webhook_secret)]) if (text.includes(key.slice('whsec_'.length))) leaks.push(`${where} (webhook secret)`);
      for (const token of fileTokens) if (text.includes(token)) leaks.push(`${where} (file upload or download token)`);
      for (const [name, id] of [['request id', requestId], ['inbox id', inboxId], ['private key', pair.privateKey]]) if (text.includes(id!)) leaks.push(`${where} (${name})`);
    };
    look('service logs', sys.logs());
    for (const message of sys.busMessages) look(`bus ${message.routingKey}`, message.body);
    for (const body of webhookDeadLetters) look('webhook dead letter', body);
    const everything = `${sys.logs()}\n${sys.busMessages.map((m) => m.body).join('\n')}`;
    const leakedUuids = [...sys.created.keys()].filter((uuid) => everything.includes(uuid));
    expect(leakedUuids).toEqual([]); // no note of this run, the taken-down ones included
    for (const [service, url] of Object.entries(sys.adminUrl)) look(`${service} /metrics`, await (await fetch(`${url}/metrics`)).text());
    look('databases', await sys.dumpDatabases());
    expect(sys.busMessages.length).toBeGreaterThan(0);
    expect(leaks).toEqual([]);
  });
});

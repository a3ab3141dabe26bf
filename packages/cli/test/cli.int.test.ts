import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { keyCheck, newKey, seal } from '@vanish/envelope';
import { type CommandResult, runToEnd } from '@vanish/testkit/process';

/*
 * The `vanish` command as a user runs it (a separate process), against small local HTTP servers that play a
 * vanish server, a false one, or one that redirects: what it sends, what it prints, and what it refuses. The
 * passcode prompt runs on a real pseudo-terminal (util-linux `script`). The real server is in
 * test/cli/cli-install.e2e.test.ts.
 */
const BIN = resolve(__dirname, '../bin/vanish.js');
const UUID = '9b2d3f0a-1c2e-4d5f-8a9b-0c1d2e3f4a5b';
const RECEIPT = 'wjV_NgILwDxGPQWLkP_1QJYkBnCQroG1nWpLuifQS3c';
const ANY_KEY_IN_A_LINK = /#[A-Za-z0-9_-]{43}/;

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: string }
interface FakeServer { base: string; seen: Seen[]; close(): Promise<void> }
type Handler = (req: Seen, res: ServerResponse, base: string) => void;

async function fakeServer(handler: Handler): Promise<FakeServer> {
  const seen: Seen[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8'); });
    req.on('end', () => {
      const request = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(request);
      handler(request, res, base);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, seen, close: () => new Promise((done) => { server.close(() => done()); }) };
}

const json = (res: ServerResponse, status: number, body: unknown) => { res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)); };
const html = (res: ServerResponse, status: number, body: string) => { res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(body); };

type Result = CommandResult;

function vanish(args: string[], stdin = '', env: Record<string, string | undefined> = {}): Promise<Result> {
  // The receipts vanish create keeps go to this test's folder, never the user's config (DECISIONS 16).
  return runToEnd(process.execPath, [BIN, ...args], { env: { ...process.env, VANISH_URL: undefined, VANISH_PASSCODE: undefined, VANISH_CONFIG_DIR: join(dir, 'config'), ...env }, stdin });
}

/**
 * vanish on a pseudo-terminal of its own (its /dev/tty), as at a keyboard: each answer is typed only once the
 * prompt before it has appeared. Returns everything the terminal showed.
 */
function vanishOnTerminal(args: string[], answers: Array<{ after: string; type: string }>, env: Record<string, string> = {}): Promise<{ code: number | null; screen: string }> {
  const quoted = [process.execPath, BIN, ...args].map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  return new Promise((done, fail) => {
    const child = spawn('script', ['-qefc', quoted, '/dev/null'], { env: { ...process.env, VANISH_URL: undefined, VANISH_PASSCODE: undefined, VANISH_CONFIG_DIR: join(dir, 'config'), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let screen = '';
    const pending = [...answers];
    let from = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      screen += chunk.toString('utf8');
      for (let at = screen.indexOf(pending[0]?.after ?? '\u0000', from); pending.length > 0 && at !== -1; at = screen.indexOf(pending[0]?.after ?? '\u0000', from)) {
        from = at + pending[0]!.after.length;
        child.stdin.write(`${pending.shift()!.type}\r`);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => { screen += chunk.toString('utf8'); });
    child.on('error', fail);
    child.on('close', (code) => { child.stdin.destroy(); done({ code, screen }); });
  });
}

let dir: string;
const servers: FakeServer[] = [];
const serve = async (handler: Handler) => { const server = await fakeServer(handler); servers.push(server); return server; };

beforeAll(() => {
  if (!existsSync('/usr/bin/script')) throw new Error('these tests need util-linux `script` for a pseudo-terminal: apt-get install bsdutils');
  dir = mkdtempSync(join(tmpdir(), 'vanish-cli-int-'));
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** A creation answer as vanish gives it, with links that the test may bend. */
const answer = (base: string, over: Record<string, unknown> = {}) => ({
  success: true, uuid: UUID, url: `${base}/${UUID}`, expires_at: '2026-12-01T00:00:00.000Z', max_views: 1, has_passcode: false,
  receipt_url: `${base}/r/${RECEIPT}`, note_ref: '3f0c5c0e8a1b4d2e9f6a7b8c9d0e1f2a', ...over,
});

describe('vanish create against a server that answers falsely', () => {
  it('when the server answers a link to another origin, then nothing with a key is printed and it exits 1', async () => {
    const server = await serve((_req, res) => json(res, 200, answer('https://attacker.example')));
    const result = await vanish(['create', '--server', server.base], 'the vault code');
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('https://attacker.example/');
    expect(result.stderr).toContain('printed no link and no key');
    expect(`${result.stdout}${result.stderr}`).not.toMatch(ANY_KEY_IN_A_LINK);
    // What went to the server was sealed: neither the text nor a key.
    const sent = JSON.parse(server.seen[0]!.body) as Record<string, unknown>;
    expect(sent).toMatchObject({ client_encrypted: true, content: expect.stringMatching(/^vz1\./), key_check: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    expect(server.seen[0]!.body).not.toContain('the vault code');
  });

  it('when the note link is right but the receipt link or the path is bent, then it is refused too, even with --json', async () => {
    for (const bend of [
      (base: string) => answer(base, { receipt_url: `https://attacker.example/r/${RECEIPT}` }),
      (base: string) => answer(base, { url: `${base}/${UUID}/../${UUID}x` }),
      (base: string) => answer(base, { url: `${base}/${UUID}?next=https://attacker.example` }),
      (base: string) => answer(base, { uuid: 'not-a-uuid', url: `${base}/not-a-uuid` }),
    ]) {
      const server = await serve((_req, res, base) => json(res, 200, bend(base)));
      const result = await vanish(['create', '--server', server.base, '--json'], 'x');
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).not.toMatch(ANY_KEY_IN_A_LINK);
    }
  });

  it('when the server answers a redirect, then vanish follows none: the other address receives nothing', async () => {
    const elsewhere = await serve((_req, res) => json(res, 200, answer('http://127.0.0.1:1')));
    const server = await serve((_req, res) => { res.writeHead(307, { location: `${elsewhere.base}/api/create.php` }).end(); });
    const result = await vanish(['create', '--server', server.base], 'x');
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('follows no redirect');
    expect(elsewhere.seen).toHaveLength(0);
  });

  it('when the server refuses, then its reason is printed with any control characters made visible', async () => {
    const server = await serve((_req, res) => json(res, 400, { error: 'bad \u001b[2J note', code: 'INVALID_CONTENT', details: { parameter: 'content' } }));
    const result = await vanish(['create', '--server', server.base], 'x');
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('bad \\x1b[2J note (INVALID_CONTENT, content)');
  });

  it('when the server is plain http on another host, then vanish refuses before sending anything (create and open)', async () => {
    await expect(vanish(['create', '--server', 'http://vanish.example'], 'x')).resolves.toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('refusing plain http:// to vanish.example') });
    await expect(vanish(['create'], 'x', { VANISH_URL: 'http://192.0.2.1:8080' })).resolves.toMatchObject({ code: 2, stderr: expect.stringContaining('refusing plain http://') });
    await expect(vanish(['open', `http://vanish.example/${UUID}#${newKey()}`])).resolves.toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('refusing plain http://') });
  });
});

describe('vanish create: what it prints and sends', () => {
  it('when the server answers, then stdout holds the link alone, stderr the receipt with its warning and the webhook secret; --json holds every field', async () => {
    const server = await serve((req, res, base) => json(res, 200, answer(base, { webhook_secret: 'whsec_c2VjcmV0', has_passcode: JSON.parse(req.body).passcode !== undefined })));
    const result = await vanish(['create', '--server', server.base, '-v', '3', '-e', '2', '-n', 'me@example.com', '-s', 'you@example.com', '-w', 'https://hooks.example/v'], 'x');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^${server.base}/${UUID}#[A-Za-z0-9_-]{43}\\n$`));
    expect(result.stderr).toContain(`Your receipt: keep this, do not share it\n${server.base}/r/${RECEIPT}\n`);
    expect(result.stderr).toContain('Webhook signing secret (shown once, not again): whsec_c2VjcmV0');
    expect(result.stderr).toContain('Webhook note reference: 3f0c5c0e8a1b4d2e9f6a7b8c9d0e1f2a');
    expect(JSON.parse(server.seen[0]!.body)).toMatchObject({
      expiry_type: 'both', max_views: 3, expiry_time: 2, notification_email: 'me@example.com', send_link_email: 'you@example.com', webhook_url: 'https://hooks.example/v',
    });

    const asJson = await vanish(['create', '--server', server.base, '--json', '-w', 'https://hooks.example/v'], 'x');
    expect(asJson).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(asJson.stdout) as Record<string, string>;
    expect(out).toEqual({ ...answer(server.base, { webhook_secret: 'whsec_c2VjcmV0' }), link: `${server.base}/${UUID}#${out.key}`, key: out.key });
  });

  it('when the passcode comes from the environment or a file, then it is sent; --passcode on the command line is refused and nothing is sent', async () => {
    const server = await serve((_req, res, base) => json(res, 200, answer(base, { has_passcode: true })));
    await expect(vanish(['create', '--server', server.base], 'x', { VANISH_PASSCODE: 'from env' })).resolves.toMatchObject({ code: 0 });
    const file = join(dir, 'pin.txt');
    writeFileSync(file, 'from file\n');
    await expect(vanish(['create', '--server', server.base, '--passcode-file', file], 'x', { VANISH_PASSCODE: 'from env' })).resolves.toMatchObject({ code: 0, stderr: expect.stringContaining('The reader also needs the passcode') });
    expect(server.seen.map((req) => (JSON.parse(req.body) as { passcode?: string }).passcode)).toEqual(['from env', 'from file']);

    const refused = await vanish(['create', '--server', server.base, '--passcode', 'in argv'], 'x');
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toContain('--passcode-file');
    expect(refused.stderr).not.toContain('in argv');
    await expect(vanish(['create', '--server', server.base, '--ask-passcode'], 'x')).resolves.toMatchObject({ code: 2, stderr: expect.stringContaining('needs a terminal') });
    expect(server.seen).toHaveLength(2);
  });

  it('when --ask-passcode runs at a terminal, then the passcode is asked twice without echo and sent', async () => {
    const server = await serve((_req, res, base) => json(res, 200, answer(base, { has_passcode: true })));
    const note = join(dir, 'note.txt');
    writeFileSync(note, 'typed at a terminal');
    const run = await vanishOnTerminal(['create', '--server', server.base, '--file', note, '--ask-passcode'], [
      { after: 'Passcode for the note (not shown): ', type: 'tty secret' },
      { after: 'The same passcode again: ', type: 'tty secret' },
    ]);
    expect(run.code).toBe(0);
    expect(run.screen).toContain(`${server.base}/${UUID}#`);
    expect(run.screen).not.toContain('tty secret');
    expect((JSON.parse(server.seen[0]!.body) as { passcode: string }).passcode).toBe('tty secret');
  });
});

/** A note page and its reveal as the notes service's pages answer them, for a note sealed under `key`. */
async function notePages(text: string, key: string, options: { passcode?: string; sealedByWriter?: boolean; answerText?: boolean } = {}) {
  const sealedByWriter = options.sealedByWriter ?? true;
  const envelope = await seal(text, key);
  const proof = await keyCheck(key);
  return serve((req, res) => {
    if (req.method === 'GET' && req.url === `/${UUID}`) {
      html(res, 200, `<!doctype html><header><form method="get" data-settings><select name="lang"></select></form></header><main>
        <form method="post"${sealedByWriter ? ' data-client-encrypted' : ''}><input type="hidden" name="form_token" value="tok.sig">
        ${sealedByWriter ? '<input type="hidden" name="key_check" value="">' : ''}
        ${options.passcode !== undefined ? '<label for="passcode">Passcode</label><input id="passcode" name="passcode" type="password">' : ''}
        <button type="submit">Show the note</button></form></main>`);
      return;
    }
    const form = new URLSearchParams(req.body);
    if (req.method !== 'POST' || form.get('form_token') !== 'tok.sig') { html(res, 403, '<p>Forbidden</p>'); return; }
    if (sealedByWriter && form.get('key_check') !== proof) { html(res, 400, '<p class="error" id="reveal-error">This link is incomplete.</p>'); return; }
    if (options.passcode !== undefined && form.get('passcode') !== options.passcode) { html(res, 400, '<p class="error" id="reveal-error">Wrong passcode. 4 tries left.</p>'); return; }
    html(res, 200, sealedByWriter && !options.answerText
      ? `<pre class="content" id="note-content" dir="auto" data-envelope="${envelope}">Opening…</pre>`
      : `<pre class="content" id="note-content" dir="auto">${text.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</pre>`);
  });
}

describe('vanish open through the note page', () => {
  it('when the passcode is typed at the prompt, then it is not echoed, the form carries the key proof and the passcode but never the key, and the text is shown', async () => {
    const key = newKey();
    const server = await notePages('opened here <ok> & well', key, { passcode: 'tty pin' });
    const run = await vanishOnTerminal(['open', `${server.base}/${UUID}#${key}`], [{ after: 'This note has a passcode (not shown): ', type: 'tty pin' }]);
    expect(run.code).toBe(0);
    expect(run.screen).toContain('opened here <ok> & well');
    expect(run.screen).not.toContain('tty pin');
    const posted = server.seen.find((req) => req.method === 'POST')!;
    expect(Object.fromEntries(new URLSearchParams(posted.body))).toEqual({ form_token: 'tok.sig', key_check: await keyCheck(key), passcode: 'tty pin' });
    for (const req of server.seen) expect(JSON.stringify(req)).not.toContain(key);
  });

  it('when no link is given at a terminal, then it is asked without echo too, and neither it nor the key shows', async () => {
    const key = newKey();
    const server = await notePages('asked for the link', key, { passcode: 'pin two' });
    const run = await vanishOnTerminal(['open'], [
      { after: 'The note\'s link (not shown): ', type: `${server.base}/${UUID}#${key}` },
      { after: 'This note has a passcode (not shown): ', type: 'pin two' },
    ]);
    expect(run.code).toBe(0);
    expect(run.screen).toContain('asked for the link');
    expect(run.screen).not.toContain(key);
    expect(run.screen).not.toContain('pin two');
  });

  it('when the link comes on stdin and the passcode from a file, then the exact text goes to --out (mode 600), and an existing file is never overwritten', async () => {
    const key = newKey();
    const server = await notePages('line one\nline two, no final break', key, { passcode: 'pin' });
    const pin = join(dir, 'open-pin.txt');
    writeFileSync(pin, 'pin\n');
    const out = join(dir, 'note-out.txt');
    await expect(vanish(['open', '-', '--passcode-file', pin, '--out', out], `${server.base}/${UUID}#${key}\n`)).resolves.toMatchObject({ code: 0, stdout: '' });
    expect(require('node:fs').readFileSync(out, 'utf8')).toBe('line one\nline two, no final break');
    expect(require('node:fs').statSync(out).mode & 0o777).toBe(0o600);
    const before = server.seen.length;
    await expect(vanish(['open', `${server.base}/${UUID}#${key}`, '--out', out], '', { VANISH_PASSCODE: 'pin' })).resolves.toMatchObject({ code: 2, stderr: expect.stringContaining('never overwrites') });
    expect(server.seen).toHaveLength(before);
  });

  it('when a false server says a keyed note was not sealed by its writer, or answers text in place of the envelope, then nothing is printed', async () => {
    const key = newKey();
    const downgraded = await notePages('server text', key, { sealedByWriter: false });
    const result = await vanish(['open', `${downgraded.base}/${UUID}#${key}`]);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(downgraded.seen.filter((req) => req.method === 'POST')).toHaveLength(0);

    const swapped = await notePages('server text', key, { answerText: true });
    await expect(vanish(['open', `${swapped.base}/${UUID}#${key}`])).resolves.toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('no sealed envelope') });
  });

  it('when the key is wrong, the link has none, or no passcode can be had, then the page\'s reason is printed and nothing is revealed', async () => {
    const key = newKey();
    const server = await notePages('x', key, { passcode: 'pin' });
    await expect(vanish(['open', `${server.base}/${UUID}#${newKey()}`], '', { VANISH_PASSCODE: 'pin' })).resolves.toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('This link is incomplete') });
    await expect(vanish(['open', `${server.base}/${UUID}#${key}`], '', { VANISH_PASSCODE: 'nope' })).resolves.toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('Wrong passcode') });
    await expect(vanish(['open', `${server.base}/${UUID}`])).resolves.toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('the link has no key') });
    await expect(vanish(['open', `${server.base}/${UUID}#${key}`])).resolves.toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('no terminal to ask') });
  });

  it('when a note was encrypted by the server (no key in its link), then its text is printed and stderr says the server had it', async () => {
    const server = await notePages('plain & <simple>', newKey(), { sealedByWriter: false });
    await expect(vanish(['open', `${server.base}/${UUID}`])).resolves.toEqual({ code: 0, stdout: 'plain & <simple>', stderr: expect.stringContaining('encrypted by the server') });
  });
});

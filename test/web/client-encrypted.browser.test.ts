import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext } from 'playwright-core';
import { freePort } from '@vanish/testkit/net';
import { formToken as tokenFor, rawPost as postForm } from './support/form-posts';
import { type RunningProcess } from '@vanish/testkit/process';
import { type SmtpSink, startSmtpSink } from '@vanish/testkit/smtp-sink';
import { launchChromium, startAllInOne } from '../support/browser';

/**
 * DECISIONS 13 (issue 24), end to end: notes sealed by the `vanish` CLI on this machine, served by the
 * all-in-one process (SQLite, in-process bus, e-mail to a real SMTP sink), opened in Debian's Chromium.
 * The server must never see the text or the key, and a reveal without the key must consume nothing.
 */
const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'packages/cli/bin/vanish.js');

jest.setTimeout(120_000);

let dataDir: string;
let app: RunningProcess;
let sink: SmtpSink;
let browser: Browser;
let base: string;

interface CliResult { code: number | null; stdout: string; stderr: string }

function vanish(args: string[], stdin = '', env: Record<string, string> = {}): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

async function createWithCli(text: string, args: string[] = [], env: Record<string, string> = {}): Promise<{ link: string; uuid: string; key: string }> {
  const result = await vanish(['create', '--server', base, ...args], text, env);
  expect(result.code).toBe(0);
  // The link alone on stdout; the receipt (for the writer only) on stderr.
  expect(result.stderr).toContain('Your receipt: keep this, do not share it');
  const link = result.stdout.trim();
  const match = /^(http:\/\/[^#]+)\/([0-9a-f-]{36})#([A-Za-z0-9_-]{43})$/.exec(link);
  if (!match) throw new Error(`not a full link: ${link}`);
  return { link, uuid: match[2]!, key: match[3]! };
}

async function currentViews(uuid: string): Promise<number | 'gone'> {
  const res = await fetch(`${base}/api/view/${uuid}.php`);
  if (res.status === 404) return 'gone';
  expect(res.status).toBe(200);
  return ((await res.json()) as { note: { current_views: number } }).note.current_views;
}

/** Every request a browser context sends: URL, headers and body. */
function recordRequests(context: BrowserContext): string[] {
  const seen: string[] = [];
  context.on('request', (req) => { seen.push(JSON.stringify({ url: req.url(), headers: req.headers(), body: req.postData() ?? '' })); });
  return seen;
}

/** What the server keeps and says: every file in its data directory (databases, outbox) and its log. */
function serverSide(): string {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const file = join(dir, name);
      if (statSync(file).isDirectory()) walk(file);
      else files.push(readFileSync(file).toString('latin1'));
    }
  };
  walk(dataDir);
  return files.join('\n') + app.output();
}

const rawPost = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => postForm(base, path, form, headers);
const formToken = (uuid: string) => tokenFor(base, uuid);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vanish-client-encrypted-'));
  sink = await startSmtpSink();
  ({ app, base } = await startAllInOne(dataDir, { SMTP_URL: sink.url }));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await sink?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('notes sealed by the vanish CLI, opened in Chromium', () => {
  it('when the full link is opened in a fresh browser, then the text appears after the button, one view is counted, and neither the text nor the key reached the server', async () => {
    const text = `launch code ${Date.now()} ✈️`;
    const { link, uuid, key } = await createWithCli(text, ['--views', '2']);
    const context = await browser.newContext();
    const requests = recordRequests(context);
    const page = await context.newPage();
    await page.goto(link);
    expect(await currentViews(uuid)).toBe(0);
    await page.getByRole('button', { name: 'Show the note' }).click();
    await page.locator('#note-content[data-opened="yes"]').waitFor();
    await expect(page.locator('#note-content').textContent()).resolves.toBe(text);
    expect(await currentViews(uuid)).toBe(1);
    await context.close();

    expect(requests.length).toBeGreaterThan(2);
    for (const sent of requests) {
      expect(sent).not.toContain(text);
      expect(sent).not.toContain(key);
    }
    const server = serverSide();
    expect(server).not.toContain(text);
    expect(server).not.toContain(key);
  });

  it('when the link has no fragment or a wrong one, then the button consumes nothing and counts no lock-out, the page explains, and the right link still works', async () => {
    const { link, uuid } = await createWithCli('only with the key', [], { VANISH_PASSCODE: 'pin' });
    const page = await browser.newPage();

    await page.goto(link.split('#')[0]!);
    await expect(page.locator('#key-missing').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Show the note' }).isDisabled()).resolves.toBe(true);
    // Sealed by the CLI: the page cannot tell a browser from the CLI, and says what is true of both (issue 32).
    await expect(page.locator('#key-missing').textContent()).resolves.toContain('sealed on the writer’s machine');
    await expect(page.locator('main').textContent()).resolves.not.toContain('writer’s browser');
    await expect(page.getByLabel('Key', { exact: true }).isVisible()).resolves.toBe(true);

    // The key pasted after the # in place (no reload): the page takes it up.
    await page.goto(`${link.split('#')[0]}#${link.split('#')[1]}`);
    await expect(page.getByRole('button', { name: 'Show the note' }).isEnabled()).resolves.toBe(true);
    await expect(page.locator('#key-missing').isVisible()).resolves.toBe(false);

    // A well-formed key that is not this note's: the proof does not match, nothing is consumed.
    const wrong = `${link.split('#')[0]}#${'A'.repeat(42)}A`;
    for (let i = 0; i < 6; i += 1) {
      await page.goto('about:blank');
      await page.goto(wrong);
      await page.getByLabel('Passcode').fill('not the pin');
      await page.getByRole('button', { name: 'Show the note' }).click();
      await page.waitForLoadState('domcontentloaded');
      await expect(page.locator('#reveal-error').textContent()).resolves.toContain('The note stayed closed');
    }
    expect(await currentViews(uuid)).toBe(0);

    await page.goto('about:blank');
    await page.goto(link);
    await page.getByLabel('Passcode').fill('pin');
    await page.getByRole('button', { name: 'Show the note' }).click();
    await page.locator('#note-content[data-opened="yes"]').waitFor();
    await expect(page.locator('#note-content').textContent()).resolves.toBe('only with the key');
    expect(await currentViews(uuid)).toBe('gone');
    await page.close();
  });

  it('when a preview bot fetches the link (GET and HEAD) or a browser without JavaScript presses the button, then nothing is consumed', async () => {
    const { link, uuid } = await createWithCli('not for bots');
    const pagePath = `/${uuid}`;
    expect((await fetch(`${base}${pagePath}`, { headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0' } })).status).toBe(200);
    expect((await fetch(`${base}${pagePath}`, { method: 'HEAD' })).status).toBe(200);

    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole('button', { name: 'Show the note' }).click();
    await page.waitForLoadState('domcontentloaded');
    await expect(page.locator('#reveal-error').textContent()).resolves.toContain('The note stayed closed');
    await context.close();
    expect(await currentViews(uuid)).toBe(0);
  });

  it('when 20 reveals with the right proof race for a 3-view note, then at most 3 get the envelope', async () => {
    const { uuid, key } = await createWithCli('three times at most', ['--views', '3']);
    const { keyCheck } = await import('@vanish/envelope');
    const proof = await keyCheck(key);
    const tokens = await Promise.all(Array.from({ length: 20 }, () => formToken(uuid)));
    const answers = await Promise.all(tokens.map((form_token) => rawPost(`/${uuid}`, { form_token, key_check: proof })));
    const revealed = answers.filter((a) => a.status === 200 && a.body.includes('data-envelope="vz1.'));
    expect(revealed.length).toBeLessThanOrEqual(3);
    expect(revealed.length).toBeGreaterThanOrEqual(1);
    expect(await currentViews(uuid)).toBe('gone');
  });
});

describe('the create page seals in the browser (DECISIONS 13)', () => {
  it('when a note is written on the create page and opened in a fresh browser, then no request, file or log line ever held its text or key, and one view is counted', async () => {
    const text = `written in the page ${Date.now()} 🗝`;
    const writer = await browser.newContext();
    const sent = recordRequests(writer);
    const page = await writer.newPage();
    await page.goto(`${base}/`);
    await expect(page.locator('#sealing-hint').isVisible()).resolves.toBe(true);
    await page.getByLabel('Note').fill(text);
    await page.getByRole('button', { name: 'Create note' }).click();
    // The page's (deferred) script adds the key to the link it shows: wait for it.
    await page.locator('#note-link').filter({ hasText: '#' }).waitFor();
    const link = (await page.locator('#note-link').textContent())!.trim();
    const key = (await page.locator('#note-key').textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${base}/[0-9a-f-]{36}#[A-Za-z0-9_-]{43}$`));
    expect(link.endsWith(`#${key}`)).toBe(true);
    await page.setViewportSize({ width: 1200, height: 900 });
    await page.screenshot({ path: join(ROOT, 'docs', 'screenshots', 'created-in-browser-desktop.png'), fullPage: true });
    // The key was handed from the create page to this one in the tab's session storage, and is gone from it now.
    await expect(page.evaluate('sessionStorage.length')).resolves.toBe(0);
    await writer.close();

    const reader = await browser.newContext();
    const read = recordRequests(reader);
    const readerPage = await reader.newPage();
    await readerPage.goto(link);
    await readerPage.getByRole('button', { name: 'Show the note' }).click();
    await readerPage.locator('#note-content[data-opened="yes"]').waitFor();
    await expect(readerPage.locator('#note-content').textContent()).resolves.toBe(text);
    await reader.close();
    expect(await currentViews(link.slice(base.length + 1, base.length + 37))).toBe('gone');

    for (const request of [...sent, ...read]) {
      expect(request).not.toContain(text);
      expect(request).not.toContain(key);
    }
    const server = serverSide();
    expect(server).not.toContain(text);
    expect(server).not.toContain(key);
  });

  it('when JavaScript is off on the create page, then the note is made by the server as before, the page says so, and it reveals as today', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.getByLabel('Note').fill('sent as text');
    await page.getByRole('button', { name: 'Create note' }).click();
    await page.waitForLoadState('domcontentloaded');
    const link = (await page.locator('#note-link').textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${base}/[0-9a-f-]{36}$`));
    await expect(page.locator('main').textContent()).resolves.toContain('This note was encrypted by the server');
    await expect(page.locator('.qr svg').count()).resolves.toBe(1);
    await page.goto(link);
    await page.getByRole('button', { name: 'Show the note' }).click();
    await page.waitForLoadState('domcontentloaded');
    await expect(page.locator('#note-content').textContent()).resolves.toBe('sent as text');
    await context.close();
  });

  it('when the page is not a secure context (plain HTTP on a host other than localhost), then it falls back to the server and says so', async () => {
    const insecure = await launchChromium(['--host-resolver-rules=MAP vanish.test 127.0.0.1']);
    try {
      const page = await insecure.newPage();
      await page.goto(base.replace('127.0.0.1', 'vanish.test') + '/');
      await expect(page.evaluate('window.isSecureContext')).resolves.toBe(false);
      await expect(page.locator('#sealing-hint').isVisible()).resolves.toBe(false);
      await page.getByLabel('Note').fill('no webcrypto here');
      await page.getByRole('button', { name: 'Create note' }).click();
      await page.waitForLoadState('domcontentloaded');
      const link = (await page.locator('#note-link').textContent())!.trim();
      expect(link).toMatch(new RegExp(`^${base}/[0-9a-f-]{36}$`));
      await expect(page.locator('main').textContent()).resolves.toContain('This note was encrypted by the server');
    } finally {
      await insecure.close();
    }
  });
});

describe('the vanish CLI against the running service', () => {
  it('when every creation option is given on stdin, then the note has them and the link e-mail (real SMTP) holds the link without the key', async () => {
    const before = sink.messages.length;
    const result = await vanish(['create', '--views', '4', '--expires', '2', '--notify', 'owner@example.com', '--send-link', 'friend@example.com', '--json'], 'with every option', { VANISH_URL: base, VANISH_PASSCODE: 'pin' });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(result.stdout) as { link: string; uuid: string; key: string; max_views: number; has_passcode: boolean };
    expect(out).toMatchObject({ max_views: 4, has_passcode: true });
    expect(out.link).toBe(`${base}/${out.uuid}#${out.key}`);
    const meta = (await (await fetch(`${base}/api/view/${out.uuid}.php`)).json()) as { note: Record<string, unknown> };
    expect(meta.note).toMatchObject({ expiry_type: 'both', max_views: 4, has_passcode: true, current_views: 0 });

    const [mail] = (await sink.waitForMessages(before + 1)).slice(before);
    expect(mail!.to).toEqual(['friend@example.com']);
    const body = `${mail!.parsed.text ?? ''}${mail!.parsed.html || ''}`;
    expect(body).toContain(`${base}/${out.uuid}`);
    expect(body).not.toContain(out.key);
    expect(body).toContain('missing its key on purpose');
  });

  it('when the note comes from --file, then it is created; an empty note, a too long one and an unreachable server exit non-zero with a clear message', async () => {
    const file = join(dataDir, 'note.txt');
    writeFileSync(file, 'from a file');
    const fromFile = await vanish(['create', '--file', file, '--server', base, '--expires', '1']);
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout.trim()).toMatch(new RegExp(`^${base}/[0-9a-f-]{36}#[A-Za-z0-9_-]{43}$`));

    await expect(vanish(['create', '--server', base], '  \n')).resolves.toMatchObject({ code: 2, stderr: expect.stringContaining('the note is empty') });
    await expect(vanish(['create', '--server', base], 'x'.repeat(10_001))).resolves.toMatchObject({ code: 2, stderr: expect.stringContaining('longer than 10000') });
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    await expect(vanish(['create', '--server', unreachable], 'hello')).resolves.toMatchObject({ code: 1, stderr: expect.stringContaining(`cannot reach ${unreachable}`) });
    await expect(vanish(['create', '--server', base, '--notify', 'not-an-address'], 'hello')).resolves.toMatchObject({ code: 1, stderr: expect.stringContaining('INVALID_EMAIL') });
    await expect(vanish(['create', '--views', '0'], 'hello')).resolves.toMatchObject({ code: 2, stderr: expect.stringContaining('--views') });
  });
});

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { freePort } from '@vanish/testkit/net';
import { formToken as tokenFor, rawPost as postForm } from './support/form-posts';
import { type RunningProcess, runProcess } from '@vanish/testkit/process';
import { launchChromium } from '../support/browser';

/**
 * Issue 4 in a real browser (Debian's Chromium through playwright-core): notes and the gateway
 * run as separate processes on their embedded defaults, the browser speaks only to the gateway.
 */
const ROOT = resolve(__dirname, '../..');
const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');

jest.setTimeout(120_000);

let dataDir: string;
let notes: RunningProcess;
let gateway: RunningProcess;
let browser: Browser;
let base: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vanish-web-'));
  const [gatewayPort, gatewayAdmin, notesPort, notesAdmin] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  base = `http://127.0.0.1:${gatewayPort}`;
  notes = await runProcess({
    script: join(ROOT, 'services/notes/dist/main.js'),
    env: {
      NODE_ENV: 'test', PORT: String(notesPort), ADMIN_PORT: String(notesAdmin), DATA_DIR: dataDir,
      DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`, PUBLIC_BASE_URL: base, LOG_LEVEL: 'warn', AMQP_URL: undefined,
    },
    readyUrl: `http://127.0.0.1:${notesAdmin}/readyz`,
  });
  gateway = await runProcess({
    script: join(ROOT, 'services/gateway/dist/main.js'),
    env: {
      NODE_ENV: 'test', PORT: String(gatewayPort), ADMIN_PORT: String(gatewayAdmin), DATA_DIR: dataDir,
      NOTES_URL: `http://127.0.0.1:${notesPort}`, STATS_URL: 'http://127.0.0.1:9', MAILER_URL: 'http://127.0.0.1:9',
      REDIS_URL: undefined, LOG_LEVEL: 'warn',
      RATE_LIMIT_CREATE_PER_HOUR: '100000', RATE_LIMIT_VIEW_PER_HOUR: '100000', RATE_LIMIT_STATS_PER_HOUR: '100000',
    },
    readyUrl: `http://127.0.0.1:${gatewayAdmin}/readyz`,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await notes?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function createNote(body: Record<string, unknown>): Promise<{ uuid: string; url: string }> {
  const res = await fetch(`${base}/api/create.php`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as { uuid: string; url: string };
}

async function currentViews(uuid: string): Promise<number | 'gone'> {
  const res = await fetch(`${base}/api/view/${uuid}.php`);
  if (res.status === 404) return 'gone';
  expect(res.status).toBe(200);
  return ((await res.json()) as { note: { current_views: number } }).note.current_views;
}

async function reveal(page: Page, url: string): Promise<void> {
  await page.goto(url);
  await page.getByRole('button', { name: 'Show the note' }).click();
  await page.waitForLoadState('domcontentloaded');
}

const rawPost = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => postForm(base, path, form, headers);
const formToken = (uuid: string) => tokenFor(base, uuid);

describe('web pages in Chromium', () => {
  it('when a note is created on the page and its link opened and revealed, then the text shows once and is gone after', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/`);
    await page.getByLabel('Note').fill('the vault code is 4711');
    await page.getByRole('button', { name: 'Create note' }).click();
    // The page's (deferred) script adds the key to the link it shows: wait for it.
    await page.locator('#note-link').filter({ hasText: '#' }).waitFor();
    const link = (await page.locator('#note-link').textContent())!.trim();
    // 127.0.0.1 is a secure context, so the page sealed the note itself and the key is the link's fragment
    // (DECISIONS 13; test/web/client-encrypted.browser.test.ts covers that mode and the server's fallback).
    expect(link).toMatch(new RegExp(`^${base}/[0-9a-f-]{36}#[A-Za-z0-9_-]{43}$`));

    await reveal(page, link);
    await page.locator('#note-content[data-opened="yes"]').waitFor();
    await expect(page.locator('#note-content').textContent()).resolves.toBe('the vault code is 4711');

    await page.reload();
    await expect(page.locator('#note-content').count()).resolves.toBe(0);
    // Via a blank page: going to the very same URL (fragment and all) would only move within the page.
    await page.goto('about:blank');
    await page.goto(link);
    await expect(page.locator('h1').textContent()).resolves.toBe('This note does not exist');
    expect(await currentViews(link.split('#')[0]!.slice(-36))).toBe('gone');
    await page.close();
  });

  it('when a note allows three views, then it shows three times and then is gone', async () => {
    const { uuid, url } = await createNote({ content: 'three times', max_views: 3 });
    const page = await browser.newPage();
    for (let view = 1; view <= 3; view += 1) {
      await reveal(page, url);
      await expect(page.locator('#note-content').textContent()).resolves.toBe('three times');
      if (view < 3) expect(await currentViews(uuid)).toBe(view);
    }
    await page.goto(url);
    await expect(page.locator('h1').textContent()).resolves.toBe('This note does not exist');
    expect(await currentViews(uuid)).toBe('gone');
    await page.close();
  });

  it('when the passcode is wrong, then nothing shows and no view is counted; when right, then the text shows', async () => {
    const { uuid, url } = await createNote({ content: 'behind a passcode', passcode: 'correct horse' });
    const page = await browser.newPage();
    await page.goto(url);
    await page.getByLabel('Passcode').fill('wrong');
    await page.getByRole('button', { name: 'Show the note' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Wrong passcode');
    expect(await page.content()).not.toContain('behind a passcode');
    expect(await currentViews(uuid)).toBe(0);

    await page.getByLabel('Passcode').fill('correct horse');
    await page.getByRole('button', { name: 'Show the note' }).click();
    await expect(page.locator('#note-content').textContent()).resolves.toBe('behind a passcode');
    await page.close();
  });

  it('when content is markup, then it renders as literal text and no dialog opens', async () => {
    const hostile = '<img src=x onerror=alert(1)></textarea><script>alert(2)</script>';
    const { url } = await createNote({ content: hostile });
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => { dialogs.push(dialog.message()); void dialog.dismiss(); });
    await reveal(page, url);
    await expect(page.locator('#note-content').textContent()).resolves.toBe(hostile);
    await expect(page.locator('#note-content img, #note-content script').count()).resolves.toBe(0);
    await page.waitForTimeout(300);
    expect(dialogs).toEqual([]);
    await page.close();
  });

  it('when twenty pages press reveal at once on a one-view note, then the text appears exactly once', async () => {
    const { url } = await createNote({ content: 'only one of you', max_views: 1 });
    const context = await browser.newContext();
    const pages = await Promise.all(Array.from({ length: 20 }, () => context.newPage()));
    await Promise.all(pages.map((page) => page.goto(url)));
    await Promise.all(pages.map((page) => page.getByRole('button', { name: 'Show the note' }).click()));
    const shown = await Promise.all(pages.map(async (page) => (await page.content()).includes('only one of you')));
    expect(shown.filter(Boolean)).toHaveLength(1);
    await context.close();
  });

  it('when the note page is fetched twenty times (as link previews do), then no view is consumed', async () => {
    const { uuid } = await createNote({ content: 'previewed', max_views: 1 });
    for (let i = 0; i < 20; i += 1) {
      const res = await fetch(`${base}/${uuid}`, { headers: { 'User-Agent': i % 2 ? 'Slackbot-LinkExpanding 1.0' : 'curl/8.0' } });
      expect(res.status).toBe(200);
      expect(await res.text()).not.toContain('previewed');
    }
    const head = await fetch(`${base}/${uuid}`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await currentViews(uuid)).toBe(0);
  });

  it('when a reveal comes from a foreign origin or replays a token, then 403 and no view is consumed', async () => {
    const { uuid } = await createNote({ content: 'csrf target', max_views: 3 });
    const foreign = await rawPost(`/${uuid}`, { form_token: await formToken(uuid) }, { Origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).not.toContain('csrf target');
    const crossSite = await rawPost(`/${uuid}`, { form_token: await formToken(uuid) }, { 'Sec-Fetch-Site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    expect(await currentViews(uuid)).toBe(0);

    const token = await formToken(uuid);
    const first = await rawPost(`/${uuid}`, { form_token: token }, { Origin: base });
    expect(first.status).toBe(200);
    expect(first.body).toContain('csrf target');
    const replay = await rawPost(`/${uuid}`, { form_token: token }, { Origin: base });
    expect(replay.status).toBe(403);
    expect(replay.body).not.toContain('csrf target');
    expect(await currentViews(uuid)).toBe(1);
  });

  it('when pages are served, then they cannot be framed and carry the DECISIONS 8 headers', async () => {
    const res = await fetch(`${base}/`);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(res.headers.get('x-xss-protection')).toBe('0');
    expect(res.headers.get('permissions-policy')).toMatch(/^accelerometer=\(\), .*camera=\(\), .*microphone=\(\)/);
  });

  it('when the pages are shown on a desktop and a phone, then screenshots are saved for the README', async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    for (const [device, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
      const context = await browser.newContext({ viewport, deviceScaleFactor: device === 'phone' ? 2 : 1 });
      const page = await context.newPage();
      await page.goto(`${base}/`);
      await page.screenshot({ path: join(SCREENSHOTS, `create-${device}.png`), fullPage: true });
      const { url } = await createNote({ content: 'Meet at the north gate at 9.\nBring the blue folder.', max_views: 2 });
      await page.goto(url);
      await page.screenshot({ path: join(SCREENSHOTS, `note-${device}.png`), fullPage: true });
      await page.getByRole('button', { name: 'Show the note' }).click();
      await page.locator('#note-content').waitFor();
      await page.screenshot({ path: join(SCREENSHOTS, `revealed-${device}.png`), fullPage: true });
      const overflow = await page.evaluate('document.documentElement.scrollWidth > window.innerWidth');
      expect(overflow).toBe(false);
      await context.close();
    }
  });
});

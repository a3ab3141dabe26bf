import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import QRCode from 'qrcode';
import { freePort } from '@vanish/testkit/net';
import { type RunningProcess, runProcess } from '@vanish/testkit/process';
import { readCatalogue } from '@vanish/common';
import { type Locale, Translations } from '../../services/notes/src/http/pages/i18n';
import { GATEWAY_LOCALES_DIR } from '../../services/gateway/src/http/error-pages';
import { launchChromium } from '../support/browser';

/**
 * Issue 32, "the pages finish what they start", in Debian's Chromium: notes and two gateways as separate
 * processes (one with room for every test, one that allows a single note an hour per address). The
 * browser-sealed created page shows all the no-JavaScript one does; the reader's page takes a key sent
 * separately; a refused create keeps the text; every page fits a 320 px screen.
 */
// What runs inside the page (playwright's evaluate) sees the browser's globals; this project has no DOM types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, requestAnimationFrame: (callback: () => void) => void, getComputedStyle: (element: unknown) => { backgroundColor: string };

const ROOT = resolve(__dirname, '../..');
const translations = new Translations();
const text = (locale: Locale, key: string, values?: Record<string, string | number>) => translations.get(locale).t(key, values);

jest.setTimeout(180_000);

let dataDir: string;
let notes: RunningProcess;
let gateway: RunningProcess;
let limitedGateway: RunningProcess;
let browser: Browser;
let base: string;
let limitedBase: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vanish-pages-finish-'));
  const [gatewayPort, gatewayAdmin, notesPort, notesAdmin, limitedPort, limitedAdmin] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  base = `http://127.0.0.1:${gatewayPort}`;
  limitedBase = `http://127.0.0.1:${limitedPort}`;
  notes = await runProcess({
    script: join(ROOT, 'services/notes/dist/main.js'),
    env: {
      NODE_ENV: 'test', PORT: String(notesPort), ADMIN_PORT: String(notesAdmin), DATA_DIR: dataDir,
      DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`, PUBLIC_BASE_URL: base, LOG_LEVEL: 'warn', AMQP_URL: undefined,
      // Webhooks to an address of this machine (nothing listens there); the page only shows the secret.
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    },
    readyUrl: `http://127.0.0.1:${notesAdmin}/readyz`,
  });
  const gatewayEnv = {
    NODE_ENV: 'test', DATA_DIR: dataDir, NOTES_URL: `http://127.0.0.1:${notesPort}`, STATS_URL: 'http://127.0.0.1:9',
    MAILER_URL: 'http://127.0.0.1:9', REDIS_URL: undefined, LOG_LEVEL: 'warn',
  };
  gateway = await runProcess({
    script: join(ROOT, 'services/gateway/dist/main.js'),
    env: {
      ...gatewayEnv, PORT: String(gatewayPort), ADMIN_PORT: String(gatewayAdmin),
      RATE_LIMIT_CREATE_PER_HOUR: '100000', RATE_LIMIT_VIEW_PER_HOUR: '100000', RATE_LIMIT_STATS_PER_HOUR: '100000',
    },
    readyUrl: `http://127.0.0.1:${gatewayAdmin}/readyz`,
  });
  // The 11th note of an hour, made the 2nd: one create an hour per address.
  limitedGateway = await runProcess({
    script: join(ROOT, 'services/gateway/dist/main.js'),
    env: { ...gatewayEnv, PORT: String(limitedPort), ADMIN_PORT: String(limitedAdmin), LOG_LEVEL: 'error', RATE_LIMIT_CREATE_PER_HOUR: '1' },
    readyUrl: `http://127.0.0.1:${limitedAdmin}/readyz`,
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await limitedGateway?.stop();
  await gateway?.stop();
  await notes?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function currentViews(uuid: string): Promise<number | 'gone'> {
  const res = await fetch(`${base}/api/view/${uuid}.php`);
  if (res.status === 404) return 'gone';
  expect(res.status).toBe(200);
  return ((await res.json()) as { note: { current_views: number } }).note.current_views;
}

async function contextFor(locale: Locale, options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  await context.addCookies([{ name: 'lang', value: locale, url: base }]);
  return context;
}

/** Every request a browser context sends: URL, headers and body. */
function recordRequests(context: BrowserContext): string[] {
  const seen: string[] = [];
  context.on('request', (req) => { seen.push(JSON.stringify({ url: req.url(), headers: req.headers(), body: req.postData() ?? '' })); });
  return seen;
}

/** Writes a note on the create page (sealed in this browser) and answers its complete link once the page shows it. */
async function createInPage(page: Page, content: string, fields: Record<string, string> = {}): Promise<{ link: string; bare: string; key: string; uuid: string }> {
  await page.goto(`${base}/`);
  await page.fill('#content', content);
  for (const [id, value] of Object.entries(fields)) await page.fill(`#${id}`, value);
  await page.locator('form[data-create] button[type=submit]').click();
  await page.waitForFunction(() => (document.querySelector('#note-link')?.textContent ?? '').includes('#'));
  const link = (await page.locator('#note-link').textContent())!.trim();
  const [bare, key] = link.split('#') as [string, string];
  return { link, bare, key, uuid: bare.slice(-36) };
}

/** The page scrolls sideways: what sticks out, or false. Measured once layout has settled. */
async function overflowing(page: Page): Promise<false | string[]> {
  return page.evaluate(async () => {
    await document.fonts.ready;
    await new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width) return false;
    return [...document.querySelectorAll('body *')].filter((element) => {
      const box = element.getBoundingClientRect();
      return !element.classList.contains('skip') && (box.right > width + 1 || box.left < -1);
    }).map((element) => `${element.tagName.toLowerCase()}#${element.id}.${element.className} ${Math.round(element.getBoundingClientRect().left)}..${Math.round(element.getBoundingClientRect().right)} of ${width}`);
  });
}

/**
 * Select boxes whose options are wider than the box (a select cannot wrap, so the text is cut off): each
 * option's text measured in the select's own font against the room inside it (padding and arrow taken off).
 */
async function cutOffSelects(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const canvas = document.createElement('canvas').getContext('2d');
    const cut: string[] = [];
    for (const select of document.querySelectorAll('select')) {
      if (select.offsetParent === null) continue;
      const style = getComputedStyle(select) as unknown as { font: string; paddingLeft: string; paddingRight: string };
      canvas.font = style.font;
      const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
      for (const option of select.options) {
        if (canvas.measureText(option.text).width > room) cut.push(`#${select.id}: ${option.text}`);
      }
    }
    return cut;
  });
}

describe('the created page of a note sealed in the browser', () => {
  it('when a webhook URL is given, then the page shows the signing secret and note reference once, and a QR code of the complete link, key included', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { link, key } = await createInPage(page, 'with a webhook', { webhook_url: 'http://127.0.0.1:9/vanish' });
    await expect(page.locator('#webhook-secret').textContent()).resolves.toMatch(/^whsec_[A-Za-z0-9+/=_-]{20,}$/);
    await expect(page.locator('#note-ref').textContent()).resolves.toMatch(/^[0-9a-f]{32}$/);
    await expect(page.locator('#webhook-secret').isVisible()).resolves.toBe(true);

    // The QR code is the library's own drawing of the complete link (the server draws the same for its links).
    await page.locator('#note-qr svg').waitFor();
    await expect(page.locator('#note-qr').isVisible()).resolves.toBe(true);
    const drawn = await page.locator('#note-qr svg path').last().getAttribute('d');
    const expected = /<path[^>]* d="([^"]+)"[^>]*\/><\/svg>/.exec(await QRCode.toString(link, { type: 'svg', errorCorrectionLevel: 'M', margin: 1 }))![1];
    expect(drawn).toBe(expected);
    await expect(page.locator('#note-qr figcaption').textContent()).resolves.toBe(text('en', 'created.qrWithKey'));
    // Sending the key separately: the bare link and the key, each with its own copy button.
    await expect(page.locator('#bare-link').textContent()).resolves.toBe(link.split('#')[0]);
    await expect(page.locator('#note-key').textContent()).resolves.toBe(key);
    await expect(page.locator('button[data-copy-target="bare-link"]').isVisible()).resolves.toBe(true);
    // The key was held by the script only: nothing was left in the tab's storage.
    await expect(page.evaluate('sessionStorage.length + localStorage.length')).resolves.toBe(0);
    await context.close();
  });

  it('when the language or theme is switched on the created page, then the page and its secrets stay, the theme applies at once and the language is kept for the next page', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const { link } = await createInPage(page, 'switch on me', { webhook_url: 'http://127.0.0.1:9/switch' });
    const secret = await page.locator('#webhook-secret').textContent();
    await page.selectOption('#settings-lang', 'de');
    await page.selectOption('#settings-theme', 'dark');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.locator('[data-saved]').waitFor();
    await expect(page.locator('[data-saved]').textContent()).resolves.toBe(text('en', 'settings.savedForNext'));
    await expect(page.locator('html').getAttribute('data-theme')).resolves.toBe('dark');
    await expect(page.evaluate(() => getComputedStyle(document.body).backgroundColor)).resolves.toBe('rgb(18, 18, 18)');
    await expect(page.locator('#note-link').textContent()).resolves.toBe(link);
    await expect(page.locator('#webhook-secret').textContent()).resolves.toBe(secret);
    const next = await context.newPage();
    await next.goto(`${base}/`);
    await expect(next.locator('html').getAttribute('lang')).resolves.toBe('de');
    await context.close();
  });
});

describe('the reader\'s page takes a key sent separately', () => {
  it('when the link has no key, then a pasted wrong key consumes nothing and the right one opens the note; no request carries the key', async () => {
    const writer = await browser.newContext();
    const { bare, key, uuid } = await createInPage(await writer.newPage(), 'the key came by phone', { passcode: 'pin' });
    await writer.close();

    const reader = await browser.newContext();
    const sent = recordRequests(reader);
    const page = await reader.newPage();
    await page.goto(bare);
    await expect(page.locator('#key-missing').textContent()).resolves.toBe(text('en', 'note.keyMissing'));
    await expect(page.getByLabel('Key', { exact: true }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Show the note' }).isDisabled()).resolves.toBe(true);

    // Not a key at all: said at once, and the button stays off.
    await page.getByLabel('Key', { exact: true }).fill('not-a-key');
    await expect(page.locator('#key-malformed').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Show the note' }).isDisabled()).resolves.toBe(true);

    // A well-formed key of another note: the proof does not match, nothing is claimed, no lock-out counted.
    const wrong = `${key.startsWith('A') ? 'B' : 'A'}${key.slice(1)}`;
    for (let attempt = 0; attempt < 6; attempt += 1) {
      await page.getByLabel('Key', { exact: true }).fill(wrong);
      await page.getByLabel('Passcode').fill('pin');
      // The refusal is a new page: wait for it to load, or the previous attempt's error (still on the old page)
      // would be read while the navigation is under way.
      await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Show the note' }).click()]);
      await page.locator('#reveal-error').waitFor();
      await expect(page.locator('#reveal-error').textContent()).resolves.toBe(text('en', 'note.keyRefused'));
      await expect(page.getByLabel('Key', { exact: true }).isVisible()).resolves.toBe(true);
    }
    expect(await currentViews(uuid)).toBe(0);

    // The complete link pasted into the field works as well as the key alone: the part after # is used.
    await page.getByLabel('Key', { exact: true }).fill(`${bare}#${key}`);
    await page.getByLabel('Passcode').fill('pin');
    await page.getByRole('button', { name: 'Show the note' }).click();
    await page.locator('#note-content[data-opened="yes"]').waitFor();
    await expect(page.locator('#note-content').textContent()).resolves.toBe('the key came by phone');
    expect(await currentViews(uuid)).toBe('gone');
    await reader.close();
    for (const request of sent) expect(request).not.toContain(key);
  });

  it('when the link has a wrong key after #, then the refusal offers the field and the right key pasted there opens the note', async () => {
    const writer = await browser.newContext();
    const { bare, key, uuid } = await createInPage(await writer.newPage(), 'fixed by pasting', { max_views: '2' });
    await writer.close();
    const page = await browser.newPage();
    await page.goto(`${bare}#${'A'.repeat(43)}`);
    await expect(page.locator('#key-field').isVisible()).resolves.toBe(false);
    await page.getByRole('button', { name: 'Show the note' }).click();
    await page.locator('#reveal-error').waitFor();
    expect(await currentViews(uuid)).toBe(0);
    await page.getByLabel('Key', { exact: true }).fill(key);
    await page.getByRole('button', { name: 'Show the note' }).click();
    await page.locator('#note-content[data-opened="yes"]').waitFor();
    await expect(page.locator('#note-content').textContent()).resolves.toBe('fixed by pasting');
    expect(await currentViews(uuid)).toBe(1);
    await page.close();
  });
});

describe('a refused create keeps what was typed', () => {
  it('when the gateway refuses the second note of the hour (429), then the text stays in the box and the page says why, for a writer', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${limitedBase}/`);
    await page.fill('#content', 'the first of the hour');
    await page.locator('form[data-create] button[type=submit]').click();
    await page.waitForFunction(() => (document.querySelector('#note-link')?.textContent ?? '').includes('#'));

    await page.goto(`${limitedBase}/`);
    const typed = 'a long text I do not want to write twice\nwith a second line';
    await page.fill('#content', typed);
    await page.fill('#max_views', '3');
    const answer = page.waitForResponse((res) => res.request().method() === 'POST');
    await page.locator('form[data-create] button[type=submit]').click();
    expect((await answer).status()).toBe(429);
    await page.locator('#create-refused').waitFor();
    await expect(page.locator('#create-refused').textContent()).resolves.toBe(text('en', 'create.refused.rate'));
    await expect(page.locator('#content').inputValue()).resolves.toBe(typed);
    await expect(page.locator('#max_views').inputValue()).resolves.toBe('3');
    await expect(page.locator('main').textContent()).resolves.not.toContain('no view was used');
    await context.close();
  });

  it('when JavaScript is off and the gateway refuses the create (429), then its page speaks to a writer', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(`${limitedBase}/`);
    await page.fill('#content', 'refused without script');
    await page.locator('form[data-create] button[type=submit]').click();
    await page.waitForLoadState('domcontentloaded');
    const english = readCatalogue(GATEWAY_LOCALES_DIR, 'en');
    await expect(page.locator('h1').textContent()).resolves.toBe(english['error.rateLimitedCreate.title']);
    await expect(page.locator('main').textContent()).resolves.not.toContain('no view was used');
    await context.close();
  });

  it('when the network fails, then the text stays; when the form token was refused (403), then a fresh one is fetched and the next press creates the note', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.fill('#content', 'survives a dropped line');
    const firstToken = await page.locator('input[name="form_token"]').inputValue();
    await page.route(`${base}/`, (route) => (route.request().method() === 'POST' ? route.abort('internetdisconnected') : route.continue()));
    await page.locator('form[data-create] button[type=submit]').click();
    await page.locator('#create-refused').waitFor();
    await expect(page.locator('#create-refused').textContent()).resolves.toBe(text('en', 'create.refused.network'));
    await expect(page.locator('#content').inputValue()).resolves.toBe('survives a dropped line');
    // After a refusal the page fetches a fresh single-use token in the background: let it land first.
    await page.waitForFunction((first) => document.querySelector('input[name="form_token"]').value !== first, firstToken);
    await page.unroute(`${base}/`);

    await page.evaluate(() => { document.querySelector('input[name="form_token"]').value = 'spent-or-forged'; });
    const refused = page.waitForResponse((res) => res.request().method() === 'POST');
    await page.locator('form[data-create] button[type=submit]').click();
    expect((await refused).status()).toBe(403);
    await page.waitForFunction((message) => document.querySelector('#create-refused')?.textContent === message, text('en', 'create.refused.token'));
    await expect(page.locator('#content').inputValue()).resolves.toBe('survives a dropped line');
    await page.waitForFunction(() => document.querySelector('input[name="form_token"]').value !== 'spent-or-forged');
    await page.locator('form[data-create] button[type=submit]').click();
    await page.waitForFunction(() => (document.querySelector('#note-link')?.textContent ?? '').includes('#'));
    await context.close();
  });

  it('when the server refuses a field (400), then the page says which and the sealed text is back in the box, never sent', async () => {
    const context = await browser.newContext();
    const sent = recordRequests(context);
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.fill('#content', 'kept through a 400');
    await page.fill('#notification_email', 'not-an-address');
    await page.locator('form[data-create] button[type=submit]').click();
    await page.locator('#notification_email-error').waitFor();
    await expect(page.locator('#content').inputValue()).resolves.toBe('kept through a 400');
    await expect(page.locator('#create-error').textContent()).resolves.toContain(text('en', 'create.keptHere'));
    for (const request of sent) expect(request).not.toContain('kept through a 400');
    await context.close();
  });
});

describe('every page at 320 px', () => {
  it.each(['en', 'ar'] as const)('when every page is shown in %s on a 320 px screen, then none scrolls sideways', async (locale) => {
    const context = await contextFor(locale, { viewport: { width: 320, height: 640 } });
    const page = await context.newPage();
    const seen: Record<string, false | string[]> = {};
    await page.goto(`${base}/`);
    for (const type of ['view', 'time', 'both']) {
      await page.selectOption('#expiry_type', type);
      seen[`create, ${type}`] = await overflowing(page);
    }
    expect(await cutOffSelects(page)).toEqual([]);
    const { bare, link } = await createInPage(page, 'narrow', { webhook_url: 'http://127.0.0.1:9/narrow', send_link_email: 'friend@example.com' });
    await page.locator('#note-qr svg').waitFor();
    seen.created = await overflowing(page);
    const receipt = (await page.locator('#receipt-link a').getAttribute('href'))!;
    await page.goto(bare);
    seen['note, key field'] = await overflowing(page);
    await page.goto('about:blank');
    await page.goto(link);
    await page.locator('form[data-client-encrypted] button').click();
    await page.locator('#note-content[data-opened="yes"]').waitFor();
    seen.revealed = await overflowing(page);
    await page.goto(receipt);
    seen['receipt, ended'] = await overflowing(page);
    await page.route('**/assets/envelope.js', (route) => route.abort());
    await page.goto(`${base}/`);
    await page.fill('#content', 'sealed by the server');
    await page.locator('form[data-create] button[type=submit]').click();
    await page.locator('.qr svg').waitFor();
    seen['created by the server'] = await overflowing(page);
    await page.goto((await page.locator('#receipt-link a').getAttribute('href'))!);
    seen['receipt, waiting'] = await overflowing(page);
    await page.goto(`${base}/00000000-0000-4000-8000-000000000000`);
    seen['not found'] = await overflowing(page);
    expect(seen).toEqual(Object.fromEntries(Object.keys(seen).map((name) => [name, false])));
    await context.close();
  });
});

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freePort } from '@vanish/testkit/net';
import { type RunningProcess, runProcess } from '@vanish/testkit/process';
import { readCatalogue } from '@vanish/common';
import { LOCALES, type Locale, Translations } from '../../services/notes/src/http/pages/i18n';
import { GATEWAY_LOCALES_DIR } from '../../services/gateway/src/http/error-pages';
import { launchChromium } from '../support/browser';

/**
 * Issue 20 in Debian's Chromium: the pages in every language (right to left in Arabic), the no-JS
 * switcher and Accept-Language, both themes, axe-core on every page (zero serious or critical findings,
 * the results written as test output), keyboard-only journeys, and the README's screenshots. The receipt
 * page and the gateway's own error pages (429 from a second gateway with a view limit of one, 502 from the
 * mailer route, whose mailer is not running) are held to the same.
 */
// What runs inside the page (playwright's evaluate) sees the browser's globals; this project has no DOM types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, window: any, getComputedStyle: (element: unknown) => { backgroundColor: string },
  requestAnimationFrame: (callback: () => void) => void, MutationObserver: any;
/** The page's clipboard (Node's own `navigator` type has none). */
declare const navigator: { clipboard: { readText(): Promise<string> } };

const ROOT = resolve(__dirname, '../..');
const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
/** Where each run writes every axe finding; the summary without times is docs/accessibility/axe-summary.json. */
const AXE_OUTPUT = process.env.TEST_RESULTS_DIR ?? join(tmpdir(), 'vanish-axe');
const translations = new Translations();

jest.setTimeout(240_000);

let dataDir: string;
let notes: RunningProcess;
let gateway: RunningProcess;
/** A second gateway in front of the same notes service, allowing one note-page view an hour per address. */
let limitedGateway: RunningProcess;
let browser: Browser;
let base: string;
let limitedBase: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vanish-i18n-'));
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
      EXPIRY_PRESETS: '5m,1h,1d,7d,30d',
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
  limitedGateway = await runProcess({
    script: join(ROOT, 'services/gateway/dist/main.js'),
    env: {
      NODE_ENV: 'test', PORT: String(limitedPort), ADMIN_PORT: String(limitedAdmin), DATA_DIR: dataDir,
      NOTES_URL: `http://127.0.0.1:${notesPort}`, STATS_URL: 'http://127.0.0.1:9', MAILER_URL: 'http://127.0.0.1:9',
      REDIS_URL: undefined, LOG_LEVEL: 'error', RATE_LIMIT_VIEW_PER_HOUR: '1',
    },
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

async function createNote(body: Record<string, unknown>): Promise<{ uuid: string; url: string; receipt_url: string }> {
  const res = await fetch(`${base}/api/create.php`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return (await res.json()) as { uuid: string; url: string; receipt_url: string };
}

async function currentViews(uuid: string): Promise<number | 'gone'> {
  const res = await fetch(`${base}/api/view/${uuid}.php`);
  if (res.status === 404) return 'gone';
  return ((await res.json()) as { note: { current_views: number } }).note.current_views;
}

async function contextFor(locale: Locale, theme: 'light' | 'dark', options: Parameters<Browser['newContext']>[0] = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, ...options });
  await context.addCookies([{ name: 'lang', value: locale, url: base }, { name: 'theme', value: theme, url: base }]);
  return context;
}

const text = (locale: Locale, key: string, values?: Record<string, string | number>) => translations.get(locale).t(key, values);
/** The gateway's own messages (its error pages' titles have no placeholders). */
const gatewayText = (locale: Locale, key: string) => readCatalogue(GATEWAY_LOCALES_DIR, locale)[key]!;

/** The page is in this language, this direction, with its heading, and no raw key or unfilled placeholder shows. */
async function expectInLanguage(page: Page, locale: Locale, heading: string): Promise<void> {
  await expect(page.locator('html').getAttribute('lang')).resolves.toBe(locale);
  await expect(page.locator('html').getAttribute('dir')).resolves.toBe(locale === 'ar' ? 'rtl' : 'ltr');
  await expect(page.locator('h1').textContent()).resolves.toBe(heading);
  const body = (await page.locator('body').textContent()) ?? '';
  expect({ locale, leftovers: body.match(/\{[a-z_]+[,}]|\b(?:receipt|error|page|created)\.[a-zA-Z]+\.?[a-zA-Z]*\b/g) }).toEqual({ locale, leftovers: null });
}

/** The limited gateway's 429 page: the note page asked for until the view limit (one an hour) refuses it. */
async function rateLimitedPage(page: Page): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const answer = await page.goto(`${limitedBase}/00000000-0000-4000-8000-000000000000`);
    if (answer?.status() === 429) return;
  }
  throw new Error('the limited gateway never answered 429');
}

/** Presses Tab until the element is focused: the page is used the way a keyboard-only reader uses it. */
async function tabTo(page: Page, selector: string): Promise<void> {
  for (let presses = 0; presses < 40; presses += 1) {
    if (await page.evaluate((s) => document.activeElement === document.querySelector(s), selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

/**
 * false, or what sticks out past the page's width (phone width included). Measured once layout has
 * settled (fonts loaded, two frames drawn): a page still being laid out on a busy machine is not a finding.
 */
async function overflowing(page: Page): Promise<false | string[]> {
  return page.evaluate(async () => {
    await document.fonts.ready;
    await new Promise<void>((done) => requestAnimationFrame(() => requestAnimationFrame(() => done())));
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width) return false;
    return [...document.querySelectorAll('body *')].filter((element) => {
      const box = element.getBoundingClientRect();
      return !element.classList.contains('skip') && (box.right > width + 1 || box.left < -1);
    }).map((element) => `${element.tagName.toLowerCase()}#${element.id}.${element.className} ${Math.round(element.getBoundingClientRect().left)}..${Math.round(element.getBoundingClientRect().right)} of ${width} (page ${document.documentElement.scrollWidth})`);
  });
}

/** The created page's link once the page's script has added the key it kept (after the # sign). */
async function sealedLink(page: Page): Promise<string> {
  await page.waitForFunction(() => (document.querySelector('#note-link')?.textContent ?? '').includes('#'));
  return (await page.locator('#note-link').textContent())!.trim();
}

interface AxeFinding { id: string; impact: string | null; help: string; nodes: number }
const axeResults: Array<{ page: string; locale: string; theme: string; violations: AxeFinding[]; passes: string[]; incomplete: AxeFinding[] }> = [];

/** axe-core, given to the page through the DevTools protocol: the page's CSP stays exactly as it is. */
async function audit(page: Page, name: string, locale: Locale, theme: string): Promise<void> {
  await page.waitForLoadState('load');
  await page.evaluate(AXE_SOURCE);
  type Rule = { id: string; impact: string | null; help: string; nodes: unknown[] };
  const { violations, passes, incomplete } = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: unknown, options: object) => Promise<{ violations: Rule[]; passes: Rule[]; incomplete: Rule[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
    const brief = (v: Rule) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length });
    return { violations: result.violations.map(brief), passes: result.passes.map((v) => v.id), incomplete: result.incomplete.map(brief) };
  });
  axeResults.push({ page: name, locale, theme, violations, passes, incomplete });
  // axe really looked: the contrast of both themes among the rules it checked and passed.
  expect(passes).toEqual(expect.arrayContaining(['color-contrast', 'document-title', 'html-has-lang']));
  const overflow = await overflowing(page);
  expect({ page: name, locale, theme, overflow, serious: violations.filter((v) => v.impact === 'serious' || v.impact === 'critical') })
    .toEqual({ page: name, locale, theme, overflow: false, serious: [] });
}

describe('the pages for people everywhere (issue 20)', () => {
  afterAll(() => {
    if (axeResults.length === 0) return;
    mkdirSync(AXE_OUTPUT, { recursive: true });
    writeFileSync(join(AXE_OUTPUT, 'axe-results.json'), `${JSON.stringify({ ranAt: new Date().toISOString(), results: axeResults }, null, 2)}\n`);
    const summary = {
      tool: 'axe-core', tags: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'], audits: axeResults.length,
      seriousOrCritical: axeResults.flatMap((r) => r.violations).filter((v) => v.impact === 'serious' || v.impact === 'critical').length,
      results: axeResults.map((r) => ({
        page: r.page, locale: r.locale, theme: r.theme, rulesPassed: r.passes.length,
        violations: r.violations.map((v) => `${v.impact}: ${v.id}`), needsReview: r.incomplete.map((v) => `${v.impact}: ${v.id}`),
      })),
    };
    mkdirSync(join(ROOT, 'docs', 'accessibility'), { recursive: true });
    writeFileSync(join(ROOT, 'docs', 'accessibility', 'axe-summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
    process.stdout.write(`axe-core results: ${join(AXE_OUTPUT, 'axe-results.json')}\n`);
  });

  it.each([['en', 'light'], ['en', 'dark'], ['ar', 'light'], ['ar', 'dark']] as const)(
    'when every page is audited by axe-core in %s with the %s theme, then nothing serious or critical is found and nothing overflows',
    async (locale, theme) => {
      for (const [label, viewport] of [['desktop', { width: 1000, height: 800 }], ['phone', { width: 320, height: 640 }]] as const) {
        const context = await contextFor(locale, theme, { viewport });
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
        const page = await context.newPage();
        const name = (what: string) => `${what} (${label})`;

        await page.goto(`${base}/`);
        await page.selectOption('#expiry_type', 'both');
        await audit(page, name('create'), locale, theme);

        // A refusal said on the page itself, the text kept (issue 32).
        await page.fill('#content', 'audited');
        await page.route(`${base}/`, (route) => (route.request().method() === 'POST' ? route.abort('internetdisconnected') : route.continue()));
        await page.locator('form[data-create] button[type=submit]').click();
        await page.locator('#create-refused').waitFor();
        await audit(page, name('create, refused'), locale, theme);
        await page.unroute(`${base}/`);

        await page.fill('#webhook_url', 'http://127.0.0.1:9/audited');
        await page.locator('form[data-create] button[type=submit]').click();
        const link = await sealedLink(page);
        await page.locator('#note-qr svg').waitFor();
        await audit(page, name('created, sealed in the browser, with a webhook'), locale, theme);

        await page.goto(link.split('#')[0]!);
        await audit(page, name('note, key to paste'), locale, theme);
        await page.fill('#note-key-input', 'A'.repeat(43));
        await page.locator('form[data-client-encrypted] button').click();
        await page.waitForSelector('#reveal-error');
        await audit(page, name('note, key refused'), locale, theme);

        await page.goto('about:blank');
        await page.goto(link);
        await audit(page, name('note'), locale, theme);
        await page.locator('form[data-client-encrypted] button').click();
        await page.locator('#note-content[data-opened="yes"]').waitFor();
        await audit(page, name('revealed'), locale, theme);

        // Without the envelope script the page posts the text (DECISIONS 13's fallback): the created page with the QR code.
        await page.route('**/assets/envelope.js', (route) => route.abort());
        await page.goto(`${base}/`);
        await page.fill('#content', 'audited on the server');
        await page.locator('form[data-create] button[type=submit]').click();
        await page.waitForSelector('.qr svg');
        await audit(page, name('created, sealed by the server'), locale, theme);
        await page.unroute('**/assets/envelope.js');

        const { url } = await createNote({ content: 'x', passcode: 'pin' });
        await page.goto(url);
        await page.fill('#passcode', 'wrong');
        await page.locator('main form button[type=submit]').click();
        await page.waitForSelector('#reveal-error');
        await audit(page, name('note, wrong passcode'), locale, theme);

        await page.goto(`${base}/00000000-0000-4000-8000-000000000000`);
        await audit(page, name('not found'), locale, theme);
        await context.close();
      }
    },
  );

  it.each([...LOCALES])('when a reader of %s reveals a note and one behind a passcode, then every step is in that language and the acceptance holds', async (locale) => {
    const context = await contextFor(locale, 'light', { viewport: { width: 320, height: 640 } });
    const page = await context.newPage();
    // Every page a GET shows, at phone width, in this language: its own heading, nothing wider than the screen.
    await page.goto(`${base}/`);
    await page.selectOption('#expiry_type', 'both');
    await expect(page.locator('h1').textContent()).resolves.toBe(text(locale, 'create.heading'));
    expect(await overflowing(page)).toBe(false);
    await page.goto(`${base}/00000000-0000-4000-8000-000000000000`);
    await expect(page.locator('h1').textContent()).resolves.toBe(text(locale, 'notFound.heading'));
    expect(await overflowing(page)).toBe(false);
    const hostile = '<img src=x onerror="document.title=\'xss\'"><script>document.title="xss"</script>';
    const plain = await createNote({ content: hostile, max_views: 2 });
    // Link previews: looking at the page twice counts nothing.
    await page.goto(plain.url);
    await page.goto(plain.url);
    expect(await currentViews(plain.uuid)).toBe(0);
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe(locale);
    await expect(page.locator('html').getAttribute('dir')).resolves.toBe(locale === 'ar' ? 'rtl' : 'ltr');
    await expect(page.locator('h1').textContent()).resolves.toBe(text(locale, 'note.heading'));
    await page.getByRole('button', { name: text(locale, 'note.show') }).click();
    await expect(page.locator('#note-content').textContent()).resolves.toBe(hostile);
    await expect(page.title()).resolves.not.toBe('xss');
    await expect(page.locator('main').textContent()).resolves.toContain(text(locale, 'revealed.left', { left: 1 }));
    expect(await overflowing(page)).toBe(false);

    const guarded = await createNote({ content: 'behind a passcode', passcode: 'correct horse' });
    await page.goto(guarded.url);
    expect(await overflowing(page)).toBe(false);
    await page.getByLabel(text(locale, 'note.passcode')).fill('wrong');
    await page.getByRole('button', { name: text(locale, 'note.show') }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(text(locale, 'note.wrongPasscode', { tries: 4 }));
    await expect(page.locator('html').getAttribute('lang')).resolves.toBe(locale);
    expect(await currentViews(guarded.uuid)).toBe(0);
    await page.getByLabel(text(locale, 'note.passcode')).fill('correct horse');
    await page.getByRole('button', { name: text(locale, 'note.show') }).click();
    await expect(page.locator('#note-content').textContent()).resolves.toBe('behind a passcode');
    await expect(page.locator('main').textContent()).resolves.toContain(text(locale, 'revealed.destroyed'));
    await context.close();
  });

  it('when a passcode is wrong five times in Arabic, then the note is gone and the page says so in Arabic', async () => {
    const context = await contextFor('ar', 'dark');
    const page = await context.newPage();
    const { uuid, url } = await createNote({ content: 'locked', passcode: 'right' });
    for (let attempt = 1; attempt <= 5; attempt += 1) {
      await page.goto(url);
      await page.fill('#passcode', `wrong ${attempt}`);
      await page.locator('main form button[type=submit]').click();
      if (attempt < 5) await page.locator('#reveal-error').waitFor();
    }
    await page.getByRole('heading', { name: text('ar', 'notFound.heading') }).waitFor();
    expect(await currentViews(uuid)).toBe('gone');
    await context.close();
  });

  it('when the browser asks for a language, then it is used; the switcher, without JavaScript, changes it and the theme for good', async () => {
    const french = await browser.newContext({ locale: 'fr-FR' });
    const page = await french.newPage();
    await page.goto(`${base}/`);
    await expect(page.locator('h1').textContent()).resolves.toBe(text('fr', 'create.heading'));
    await french.close();

    const noScript = await browser.newContext({ locale: 'fr-FR', javaScriptEnabled: false });
    const plain = await noScript.newPage();
    await plain.goto(`${base}/`);
    await plain.selectOption('#settings-lang', 'ja');
    await plain.selectOption('#settings-theme', 'dark');
    await plain.getByRole('button', { name: text('fr', 'settings.apply') }).click();
    await plain.locator('html[lang="ja"]').waitFor({ state: 'attached' });
    expect(new URL(plain.url()).search).toBe('');
    await expect(plain.locator('h1').textContent()).resolves.toBe(text('ja', 'create.heading'));
    await expect(plain.locator('html').getAttribute('data-theme')).resolves.toBe('dark');
    const background = await plain.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(18, 18, 18)');
    const cookies = await noScript.cookies(base);
    expect(cookies.filter((c) => c.name === 'lang' || c.name === 'theme').map((c) => [c.name, c.value, c.sameSite, c.httpOnly]).sort())
      .toEqual([['lang', 'ja', 'Lax', true], ['theme', 'dark', 'Lax', true]]);
    // Remembered: a new page in the same browser, whatever it asks for.
    const again = await noScript.newPage();
    await again.goto(`${base}/`);
    await expect(again.locator('html').getAttribute('lang')).resolves.toBe('ja');
    await noScript.close();
  });

  it('when the language is switched on a browser-sealed note\'s page, then the link keeps its key and the note still opens', async () => {
    const context = await browser.newContext();
    const writer = await context.newPage();
    await writer.goto(`${base}/`);
    await writer.getByLabel('Note').fill('kept across the switch');
    await writer.getByRole('button', { name: 'Create note' }).click();
    const link = await sealedLink(writer);
    const reader = await context.newPage();
    await reader.goto(link);
    await reader.selectOption('#settings-lang', 'uk');
    await reader.getByRole('button', { name: 'Apply' }).click();
    await reader.waitForFunction(() => document.documentElement.lang === 'uk');
    expect(reader.url()).toBe(link);
    await reader.getByRole('button', { name: text('uk', 'note.show') }).click();
    await reader.locator('#note-content[data-opened="yes"]').waitFor();
    await expect(reader.locator('#note-content').textContent()).resolves.toBe('kept across the switch');
    await context.close();
  });

  it('when a preset is picked on the create page, then the note expires after exactly that time; custom still takes hours', async () => {
    const context = await contextFor('de', 'light');
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.selectOption('#expiry_type', 'time');
    await expect(page.locator('#expiry-time-field').isHidden()).resolves.toBe(true);
    await page.selectOption('#expiry_preset', '5m');
    await page.fill('#content', 'five minutes');
    const before = Date.now();
    await page.locator('form[data-create] button[type=submit]').click();
    const link = await sealedLink(page);
    const uuid = link.split('#')[0]!.slice(-36);
    const meta = (await (await fetch(`${base}/api/view/${uuid}.php`)).json()) as { note: { expires_at: string } };
    const expires = Date.parse(`${meta.note.expires_at.replace(' ', 'T')}Z`);
    expect(expires - before).toBeGreaterThan(4 * 60_000);
    expect(expires - before).toBeLessThan(6 * 60_000);

    await page.goto(`${base}/`);
    await page.selectOption('#expiry_type', 'time');
    await page.selectOption('#expiry_preset', 'custom');
    await expect(page.locator('#expiry-time-field').isVisible()).resolves.toBe(true);
    await page.fill('#expiry_time', '3');
    await page.fill('#content', 'three hours');
    await page.locator('form[data-create] button[type=submit]').click();
    const custom = (await sealedLink(page)).split('#')[0]!.slice(-36);
    const customMeta = (await (await fetch(`${base}/api/view/${custom}.php`)).json()) as { note: { expires_at: string } };
    const hours = (Date.parse(`${customMeta.note.expires_at.replace(' ', 'T')}Z`) - Date.now()) / 3_600_000;
    expect(hours).toBeGreaterThan(2.9);
    expect(hours).toBeLessThanOrEqual(3);
    await context.close();
  });

  it('when the create, copy, reveal and passcode journeys are made with the keyboard alone, then each one works', async () => {
    const context = await contextFor('es', 'dark');
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await tabTo(page, '#content');
    await page.keyboard.type('typed, never clicked');
    await tabTo(page, '#passcode');
    await page.keyboard.type('pin');
    await tabTo(page, 'form[data-create] button[type=submit]');
    await page.keyboard.press('Enter');
    const link = await sealedLink(page);
    // The "copied" label shows for 1.5 s once the clipboard write resolves: record every label the button
    // takes, so that a slow machine can neither read it too early nor miss it.
    await page.evaluate(() => {
      const button = document.querySelector('button[data-copy-target="note-link"]')!;
      const labels: string[] = [];
      (window as unknown as { copyLabels: string[] }).copyLabels = labels;
      new MutationObserver(() => labels.push(button.textContent ?? '')).observe(button, { childList: true, characterData: true, subtree: true });
    });
    await tabTo(page, 'button[data-copy-target="note-link"]');
    await page.keyboard.press('Enter');
    await page.waitForFunction((copied) => (window as unknown as { copyLabels: string[] }).copyLabels.includes(copied), text('es', 'created.copied'));
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(link);

    await page.goto(link);
    await tabTo(page, '#passcode');
    await page.keyboard.type('nope');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#reveal-error');
    await expect(page.locator('#reveal-error').textContent()).resolves.toBe(text('es', 'note.wrongPasscode', { tries: 4 }));
    await tabTo(page, '#passcode');
    await page.keyboard.type('pin');
    await tabTo(page, 'form[data-client-encrypted] button');
    await page.keyboard.press('Enter');
    await page.locator('#note-content[data-opened="yes"]').waitFor();
    await expect(page.locator('#note-content').textContent()).resolves.toBe('typed, never clicked');

    // The server-sealed created page: the QR code and the copy button, by keyboard too.
    const { url } = await createNote({ content: 'by keyboard' });
    await page.goto(url);
    await tabTo(page, 'main form button[type=submit]');
    await page.keyboard.press('Enter');
    await page.locator('#note-content').waitFor();
    await tabTo(page, 'button[data-copy-target="note-content"]');
    await page.keyboard.press('Enter');
    // The clipboard write is asynchronous: wait for it rather than read once.
    await page.waitForFunction(async () => (await navigator.clipboard.readText()) === 'by keyboard', undefined, { polling: 100, timeout: 10_000 });
    await context.close();
  });

  it.each([['en', 'light'], ['en', 'dark'], ['ar', 'light'], ['ar', 'dark']] as const)(
    'when the receipt page and the gateway\'s 429 and 502 pages are audited by axe-core in %s with the %s theme, then nothing serious or critical is found and nothing overflows',
    async (locale, theme) => {
      for (const [label, viewport] of [['desktop', { width: 1000, height: 800 }], ['phone', { width: 320, height: 640 }]] as const) {
        const context = await contextFor(locale, theme, { viewport });
        const page = await context.newPage();
        const name = (what: string) => `${what} (${label})`;

        // A receipt with something to tell: a page fetch, a wrong passcode and a reveal.
        const note = await createNote({ content: 'receipted', passcode: 'pin', max_views: 2 });
        await page.goto(note.url);
        await page.fill('#passcode', 'wrong');
        await page.locator('main form button[type=submit]').click();
        await page.waitForSelector('#reveal-error');
        await page.fill('#passcode', 'pin');
        await page.locator('main form button[type=submit]').click();
        await page.locator('#note-content').waitFor();
        // Made through the API, so this browser has no creator mark: the wrong-link guard comes first (DECISIONS 16).
        await page.goto(note.receipt_url);
        await expectInLanguage(page, locale, text(locale, 'receipt.guard.heading'));
        await audit(page, name('receipt, wrong-link guard'), locale, theme);
        await page.getByRole('link', { name: text(locale, 'receipt.guard.creator') }).click();
        await expectInLanguage(page, locale, text(locale, 'receipt.heading'));
        await expect(page.locator('#views-used').textContent()).resolves.toBe(text(locale, 'receipt.viewsUsedValue', { used: 1, max: 2 }));
        await expect(page.locator('#timeline time').first().getAttribute('datetime')).resolves.toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/);
        await audit(page, name('receipt'), locale, theme);
        await page.getByRole('link', { name: text(locale, 'receipt.endButton') }).click();
        await expectInLanguage(page, locale, text(locale, 'receipt.confirm.heading'));
        await audit(page, name('receipt, confirm the end'), locale, theme);
        await page.getByRole('button', { name: text(locale, 'receipt.confirm.yes') }).click();
        await page.locator('#end-reason').waitFor();
        await expect(page.locator('#end-reason').textContent()).resolves.toBe(text(locale, 'receipt.reason.creator'));
        await audit(page, name('receipt, ended'), locale, theme);

        // The wallet (DECISIONS 16), with that ended receipt and a waiting one kept in this browser.
        const waiting = await createNote({ content: 'kept', max_views: 1 });
        await page.goto(`${base}/receipts`);
        await page.evaluate((ids) => localStorage.setItem('vanish.receipts', JSON.stringify(ids.map((id) => ({ id, kept_at: new Date().toISOString() })))),
          [note.receipt_url.slice(-43), waiting.receipt_url.slice(-43)]);
        await page.reload();
        await page.locator('#wallet[data-loaded="2"]').waitFor();
        await expectInLanguage(page, locale, text(locale, 'wallet.heading'));
        await audit(page, name('receipt wallet'), locale, theme);

        await rateLimitedPage(page);
        await expectInLanguage(page, locale, gatewayText(locale, 'error.rateLimited.title'));
        await expect(page.locator('html').getAttribute('data-theme')).resolves.toBe(theme);
        await audit(page, name('gateway 429'), locale, theme);

        const unreachable = await page.goto(`${base}/unsubscribe/no-mailer-behind-this`);
        expect(unreachable?.status()).toBe(502);
        await expectInLanguage(page, locale, gatewayText(locale, 'error.unavailable.title'));
        await audit(page, name('gateway 502'), locale, theme);
        await context.close();
      }
    },
  );

  it.each([...LOCALES])('when a reader of %s opens a receipt and meets the gateway\'s 429 page on a phone, then both are in that language and fit the screen', async (locale) => {
    const context = await contextFor(locale, 'dark', { viewport: { width: 320, height: 640 } });
    const page = await context.newPage();
    const note = await createNote({ content: 'x', expiry_type: 'both', expiry_time: 24, max_views: 3 });
    await page.goto(`${note.receipt_url}?as=creator`);
    await expectInLanguage(page, locale, text(locale, 'receipt.heading'));
    await expect(page.locator('#status-heading').textContent()).resolves.toBe(text(locale, 'receipt.waiting'));
    expect(await overflowing(page)).toBe(false);
    await rateLimitedPage(page);
    await expectInLanguage(page, locale, gatewayText(locale, 'error.rateLimited.title'));
    expect(await overflowing(page)).toBe(false);
    // The stylesheet the gateway's page names is the pages' own: the dark theme is there without a script.
    await expect(page.evaluate(() => getComputedStyle(document.body).backgroundColor)).resolves.toBe('rgb(18, 18, 18)');
    await context.close();
  });

  it('when the README\'s screenshots are taken, then three languages and both themes are shown', async () => {
    // Without a Japanese font the Japanese screenshot would show empty boxes.
    const japanese = execFileSync('fc-list', [':lang=ja', 'family'], { encoding: 'utf8' }).trim();
    if (!japanese) throw new Error('no Japanese font: apt-get install -y --no-install-recommends fonts-ipafont-gothic (as .ci/run does)');
    mkdirSync(SCREENSHOTS, { recursive: true });
    const shots: Array<[Locale, 'light' | 'dark', string]> = [['de', 'light', 'create'], ['ja', 'dark', 'create'], ['ar', 'light', 'note'], ['ar', 'dark', 'create']];
    for (const [locale, theme, what] of shots) {
      const context = await contextFor(locale, theme, { viewport: { width: 1000, height: 800 } });
      const page = await context.newPage();
      if (what === 'note') {
        const { url } = await createNote({ content: 'x', passcode: 'pin', max_views: 3 });
        await page.goto(url);
      } else {
        await page.goto(`${base}/`);
        await page.selectOption('#expiry_type', 'both');
      }
      await page.screenshot({ path: join(SCREENSHOTS, `${what}-${locale}-${theme}.png`), fullPage: true });
      await context.close();
    }
  });
});

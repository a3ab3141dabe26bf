import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser } from 'playwright-core';
import { type RunningProcess } from '@vanish/testkit/process';
import { DESKTOP_UA, SLACK_PREVIEW, launchChromium, startAllInOne } from '../support/browser';

/**
 * Receipts (DECISIONS 12) in a real browser (Debian's Chromium through playwright-core) against
 * the all-in-one process, so that stats see the end too. The browser speaks only to the gateway.
 */
const ROOT = resolve(__dirname, '../..');
const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');

jest.setTimeout(180_000);

let dataDir: string;
let app: RunningProcess;
let browser: Browser;
let base: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vanish-receipts-web-'));
  ({ app, base } = await startAllInOne(dataDir));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function destroyedNotes(): Promise<number> {
  const res = await fetch(`${base}/api/stats.php`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { stats: { destroyed_notes: number } }).stats.destroyed_notes;
}

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after 60 s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('receipts in Chromium', () => {
  it('when the creator presses "End this note now" on the receipt page and confirms, then the link is not found, metadata is 404, the receipt shows the end, stats count it, and a second press does nothing', async () => {
    const context = await browser.newContext({ userAgent: DESKTOP_UA });
    const page = await context.newPage();
    await page.goto(`${base}/`);
    await page.getByLabel('Note').fill('the alarm code is 2468');
    await page.locator('#max_views').fill('3');
    await page.getByRole('button', { name: 'Create note' }).click();
    // The page sealed the note in the browser (DECISIONS 13): its script adds the key to the link it shows.
    await page.locator('#note-link').filter({ hasText: '#' }).waitFor();
    const link = (await page.locator('#note-link').textContent())!.trim();
    const receiptLink = (await page.locator('#receipt-link').textContent())!.trim();
    expect(receiptLink).toMatch(new RegExp(`^${base}/r/[A-Za-z0-9_-]{43}$`));
    await expect(page.getByRole('heading', { name: 'Your receipt: keep this, do not share it' }).count()).resolves.toBe(1);
    const uuid = link.split('#')[0]!.slice(-36);
    const before = await destroyedNotes();

    await page.goto(receiptLink);
    await expect(page.locator('#views-left').textContent()).resolves.toBe('3');
    await expect(page.locator('body').textContent()).resolves.not.toContain('the alarm code');
    // DECISIONS 16: "End this note now" asks first; only "Yes, end it now" ends the note.
    await page.getByRole('link', { name: 'End this note now' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('End this note for good?');
    await expect(page.locator('#views-left').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Yes, end it now' }).click();
    await page.waitForURL(receiptLink);
    await expect(page.locator('#end-reason').textContent()).resolves.toBe('ended by you from this receipt');
    await expect(page.getByRole('link', { name: 'End this note now' }).count()).resolves.toBe(0);
    await expect(page.locator('#timeline li[data-event="end"]').count()).resolves.toBe(1);

    await page.goto(link);
    await expect(page.locator('h1').textContent()).resolves.toBe('This note does not exist');
    expect((await fetch(`${base}/api/view/${uuid}.php`)).status).toBe(404);
    await eventually(destroyedNotes, (n) => n === before + 1, 'destroyed_notes');

    const receipt = await (await fetch(`${base}/api/receipt/${receiptLink.slice(-43)}.php`)).json() as { receipt: { timeline: Array<{ event: string }>; end_reason: string } };
    expect(receipt.receipt.end_reason).toBe('creator');
    expect(receipt.receipt.timeline.filter((entry) => entry.event === 'end')).toHaveLength(1);
    await context.close();
  });

  it('when the same form is submitted twice (a replayed token), then the second is refused and nothing changes', async () => {
    const created = await (await fetch(`${base}/api/create.php`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'twice?', max_views: 2 }) })).json() as { receipt_url: string };
    const context = await browser.newContext({ userAgent: DESKTOP_UA });
    const page = await context.newPage();
    await page.goto(`${created.receipt_url}?end=confirm`);
    const token = await page.locator('input[name="form_token"]').getAttribute('value');
    await page.getByRole('button', { name: 'Yes, end it now' }).click();
    await page.waitForURL(created.receipt_url);
    // Put the used token back into a copy of the form and press it again.
    const status = await page.evaluate(async ([url, used]) => {
      const answer = await fetch(url!, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `form_token=${encodeURIComponent(used!)}` });
      return answer.status;
    }, [created.receipt_url, token] as const);
    expect(status).toBe(403);
    const receipt = await (await fetch(`${base}/api/receipt/${created.receipt_url.slice(-43)}.php`)).json() as { receipt: { timeline: Array<{ event: string }> } };
    expect(receipt.receipt.timeline.filter((entry) => entry.event === 'end')).toHaveLength(1);
    await context.close();
  });

  it('when the receipt page is shown on a desktop and a phone, then it fits and screenshots are saved for the README', async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    for (const [device, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
      const created = await (await fetch(`${base}/api/create.php`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'Meet at the north gate at 9.', max_views: 2 }) })).json() as { url: string; receipt_url: string };
      // A chat app unfurls the link, then the reader opens it in a browser.
      await fetch(created.url, { headers: { 'user-agent': SLACK_PREVIEW } });
      await fetch(created.url, { method: 'HEAD', headers: { 'user-agent': SLACK_PREVIEW } });
      const context = await browser.newContext({ viewport, deviceScaleFactor: device === 'phone' ? 2 : 1, userAgent: DESKTOP_UA });
      const page = await context.newPage();
      await page.goto(created.url);
      await page.getByRole('button', { name: 'Show the note' }).click();
      await page.locator('#note-content').waitFor();
      // Made through the API, so this browser has no creator mark: the creator goes past the guard.
      await page.goto(`${created.receipt_url}?as=creator`);
      await expect(page.locator('#timeline li').allTextContents()).resolves.toEqual([
        expect.stringContaining('Note created'),
        expect.stringContaining('link preview bot'),
        expect.stringContaining('link preview bot'),
        expect.stringContaining('(browser)'),
        expect.stringContaining('Note opened and read'),
      ]);
      await expect(page.locator('#views-used').textContent()).resolves.toBe('1 of 2');
      await page.screenshot({ path: join(SCREENSHOTS, `receipt-${device}.png`), fullPage: true });
      const overflow = await page.evaluate('document.documentElement.scrollWidth > window.innerWidth');
      expect(overflow).toBe(false);
      await context.close();
    }
  });
});

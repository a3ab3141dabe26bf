import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { type RunningProcess, runToEnd } from '@vanish/testkit/process';
import { DESKTOP_UA, SLACK_PREVIEW, launchChromium, startAllInOne } from '../support/browser';

/**
 * DECISIONS 16 in Chromium against the all-in-one: the wrong-link guard (a receipt link opened by a browser that
 * did not create the note) and the receipt wallet (/receipts: kept in this browser, states, ending with a
 * confirmation, the export of signed receipts checked offline by verify-receipt).
 */
const ROOT = resolve(__dirname, '../..');
const VERIFY_RECEIPT = join(ROOT, 'services/notes/dist/cli/verify-receipt.js');
const SCREENSHOTS = join(ROOT, 'docs', 'screenshots');

jest.setTimeout(240_000);

let work: string;
let app: RunningProcess;
let browser: Browser;
let base: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'vanish-wallet-web-'));
  ({ app, base } = await startAllInOne(join(work, 'data')));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Creates a note on the create page of `page` (sealed in the browser); returns its link and receipt link. */
async function createOnPage(page: Page, text: string, keep: boolean, views = 1): Promise<{ link: string; receipt: string }> {
  await page.goto(`${base}/`);
  await page.getByLabel('Note').fill(text);
  await page.locator('#max_views').fill(String(views));
  await page.getByRole('button', { name: 'Create note' }).click();
  await page.locator('#note-link').filter({ hasText: '#' }).waitFor();
  if (keep) {
    await page.getByRole('button', { name: 'Keep this receipt in this browser' }).click();
    await page.locator('#keep-receipt-kept').waitFor();
  }
  return { link: (await page.locator('#note-link').textContent())!.trim(), receipt: (await page.locator('#receipt-link').textContent())!.trim() };
}

async function receiptOf(receiptUrl: string): Promise<{ status: string; views_used: number; end_reason: string | null }> {
  const res = await fetch(`${base}/api/receipt/${receiptUrl.slice(-43)}.php`);
  return ((await res.json()) as { receipt: { status: string; views_used: number; end_reason: string | null } }).receipt;
}

async function read(context: BrowserContext, link: string): Promise<void> {
  const page = await context.newPage();
  await page.goto(link);
  await page.getByRole('button', { name: 'Show the note' }).click();
  await page.locator('#note-content[data-opened="yes"]').waitFor();
  await page.close();
}

describe('the wrong-link guard in Chromium', () => {
  it('when a fresh browser opens a receipt link, then it sees the guard and no click ends the note; the creator\'s own browser sees the receipt', async () => {
    const creator = await browser.newContext({ userAgent: DESKTOP_UA });
    const made = await createOnPage(await creator.newPage(), 'the guard keeps this', false);

    const stranger = await browser.newContext({ userAgent: DESKTOP_UA });
    const page = await stranger.newPage();
    await page.goto(made.receipt);
    await expect(page.locator('h1').textContent()).resolves.toBe('This is a receipt link, not a note');
    await expect(page.locator('#receipt-guard').textContent()).resolves.toContain('If someone sent you this link');
    // Nothing on the guard posts anything or is labelled as ending: no POST form, no token, no end button or link.
    await expect(page.locator('form[method="post"], input[name="form_token"]').count()).resolves.toBe(0);
    await expect(page.getByText(/End this note/).count()).resolves.toBe(0);
    // Every link and button on the guard, clicked once each: the note is still there, untouched.
    const targets = await page.locator('main a, main button').count();
    for (let i = 0; i < targets; i++) {
      await page.goto(made.receipt);
      await page.locator('main a, main button').nth(i).click();
      await page.waitForLoadState();
      expect(await receiptOf(made.receipt)).toMatchObject({ status: 'active', views_used: 0 });
    }
    // Going on as the creator: the receipt, then "End this note now" asks first.
    await page.goto(made.receipt);
    await page.getByRole('link', { name: 'I created this note: show its receipt' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('Receipt of your note');
    await page.getByRole('link', { name: 'End this note now' }).click();
    await expect(page.locator('h1').textContent()).resolves.toBe('End this note for good?');
    await page.getByRole('link', { name: 'No, keep it' }).click();
    expect(await receiptOf(made.receipt)).toMatchObject({ status: 'active' });

    // The creator's own browser carries the mark: the receipt at once.
    const own = await creator.newPage();
    await own.goto(made.receipt);
    await expect(own.locator('h1').textContent()).resolves.toBe('Receipt of your note');
    await expect(own.locator('#views-left').textContent()).resolves.toBe('1');
    await stranger.close();
    await creator.close();
  });
});

describe('the receipt wallet in Chromium', () => {
  it('when three notes are kept in one browser and one is read, one previewed and one ended from /receipts, then each shows its state and the export verifies offline until one byte changes', async () => {
    const context = await browser.newContext({ userAgent: DESKTOP_UA, acceptDownloads: true });
    const page = await context.newPage();
    const notes = [];
    // The first allows two views, so that once read it is "read" rather than ended.
    for (const [text, views] of [['wallet one', 2], ['wallet two', 1], ['wallet three', 1]] as const) notes.push(await createOnPage(page, text, true, views));
    // The wallet is this browser's storage: receipt ids only, never a note link or key.
    const stored = await page.evaluate(() => localStorage.getItem('vanish.receipts'));
    expect((JSON.parse(stored!) as Array<{ id: string }>).map((entry) => entry.id)).toEqual(notes.map((note) => note.receipt.slice(-43)));
    expect(stored).not.toContain(notes[0]!.link.split('#')[1]);

    const reader = await browser.newContext({ userAgent: DESKTOP_UA });
    await read(reader, notes[0]!.link);
    await reader.close();
    expect((await fetch(notes[1]!.link.split('#')[0]!, { headers: { 'user-agent': SLACK_PREVIEW } })).status).toBe(200);

    await page.goto(`${base}/receipts`);
    await page.locator('#wallet[data-loaded="3"]').waitFor();
    const states = () => page.locator('#wallet-rows tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-state')));
    await expect(states()).resolves.toEqual(['read', 'previewed', 'waiting']);
    await expect(page.locator('#wallet-rows tr .state').allTextContents()).resolves.toEqual(['Read', 'Previewed by a bot', 'Waiting']);

    // "End" asks first: dismissed, nothing ends; accepted, the third note ends.
    const end = page.locator('#wallet-rows tr').nth(2).getByRole('button', { name: 'End' });
    const asked: string[] = [];
    page.once('dialog', (dialog) => { asked.push(dialog.message()); void dialog.dismiss(); });
    await end.click();
    expect(asked).toEqual(['End this note for good? Whoever has not opened it yet never will.']);
    expect(await receiptOf(notes[2]!.receipt)).toMatchObject({ status: 'active' });
    page.once('dialog', (dialog) => { void dialog.accept(); });
    await end.click();
    await page.locator('#wallet-rows tr:nth-child(3)[data-state="ended"]').waitFor();
    expect(await receiptOf(notes[2]!.receipt)).toMatchObject({ status: 'ended', end_reason: 'creator' });
    await expect(states()).resolves.toEqual(['read', 'previewed', 'ended']);
    await expect(page.locator('#wallet-rows tr').evaluateAll((rows) => rows.map((row) => row.children[2]!.textContent))).resolves.toEqual(['1 / 2', '0 / 1', '0 / 1']);
    // Shown again, the ended receipt comes from the signed copy kept here: only the two still open are read (each
    // read counts against the gateway's view limit).
    const reads: string[] = [];
    page.on('request', (request) => { if (request.url().includes('/api/receipt/')) reads.push(request.url().slice(-47, -4)); });
    await page.reload();
    await page.locator('#wallet[data-loaded="3"]').waitFor();
    await expect(states()).resolves.toEqual(['read', 'previewed', 'ended']);
    expect(reads.sort()).toEqual([notes[0]!.receipt.slice(-43), notes[1]!.receipt.slice(-43)].sort());
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'receipt-wallet-desktop.png'), fullPage: true });

    // The export: one file of signed receipts, checked offline with the key set saved beforehand.
    const keys = join(work, 'keys.json');
    writeFileSync(keys, await (await fetch(`${base}/.well-known/vanish-receipt-keys.json`)).text());
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export the signed receipts' }).click()]);
    expect(download.suggestedFilename()).toMatch(/^vanish-receipts-\d{4}-\d{2}-\d{2}\.json$/);
    const exported = join(work, 'export.json');
    await download.saveAs(exported);
    const valid = await runToEnd(process.execPath, [VERIFY_RECEIPT, exported, '--keys', keys]);
    expect(valid).toMatchObject({ code: 0, stdout: expect.stringMatching(/^VALID: 3 receipts, each signed by a key of the key set in /) });
    expect(valid.stdout).toContain('ended (creator)');
    const bytes = readFileSync(exported);
    const at = bytes.indexOf('"views_used":1') + '"views_used":'.length;
    bytes[at] = '2'.charCodeAt(0);
    writeFileSync(join(work, 'changed.json'), bytes);
    await expect(runToEnd(process.execPath, [VERIFY_RECEIPT, join(work, 'changed.json'), '--keys', keys])).resolves.toMatchObject({ code: 1, stdout: expect.stringContaining('INVALID') });
    await context.close();
  });

  it('when the wallet is shown in Arabic and "End all" is confirmed, then it is right to left, speaks Arabic, and every open note ends', async () => {
    const context = await browser.newContext({ userAgent: DESKTOP_UA });
    const page = await context.newPage();
    const notes = [await createOnPage(page, 'all one', true), await createOnPage(page, 'all two', true)];
    await page.goto(`${base}/receipts?lang=ar`);
    await page.locator('#wallet[data-loaded="2"]').waitFor();
    await expect(page.locator('html').getAttribute('dir')).resolves.toBe('rtl');
    await expect(page.locator('h1').textContent()).resolves.toBe('الإيصالات المحفوظة في هذا المتصفح');
    await expect(page.locator('#wallet-rows tr .state').allTextContents()).resolves.toEqual(['في الانتظار', 'في الانتظار']);
    const asked: string[] = [];
    page.once('dialog', (dialog) => { asked.push(dialog.message()); void dialog.accept(); });
    await page.getByRole('button', { name: 'إنهاء الكل' }).click();
    await page.locator('#wallet-rows tr[data-state="waiting"]').first().waitFor({ state: 'detached' });
    expect(asked).toEqual(['إنهاء كل ملاحظة ما زالت مفتوحة في هذه القائمة نهائيًا؟ من لم يفتحها بعد لن يفتحها أبدًا.']);
    for (const note of notes) expect(await receiptOf(note.receipt)).toMatchObject({ status: 'ended', end_reason: 'creator' });
    await expect(page.locator('#wallet-rows tr .state').allTextContents()).resolves.toEqual(['انتهت', 'انتهت']);
    await context.close();
  });
});

import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, type Request } from 'playwright-core';
import { freePort } from '@vanish/testkit/net';
import { type RunningProcess, runProcess } from '@vanish/testkit/process';
import { hashFile, makeRandomFile } from '@vanish/testkit/random-file';
import { launchChromium } from '../support/browser';

/**
 * DECISIONS 14 (issue 33) in Debian's Chromium, against notes and the gateway as separate processes: the file
 * format's test vectors hold for the bytes the server serves at /assets/file-stream.js; files are offered only
 * where the page can seal them; a 200 MB file and two small ones created on the page, the link opened in a
 * second context, each file saved as it streams and byte-identical (SHA-256) to its original, and no request of
 * either context carrying the key, a file's name or its plaintext; a second reveal finds nothing.
 */
// What runs inside the page (playwright's evaluate) sees the browser's globals; this project has no DOM types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;

const ROOT = resolve(__dirname, '../..');

jest.setTimeout(600_000);

const BIG_BYTES = Number(process.env.FILES_BROWSER_BYTES ?? 200 * 1000 * 1000);

let dataDir: string;
let notes: RunningProcess;
let gateway: RunningProcess;
let browser: Browser;
let base: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vanish-files-browser-'));
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
      NODE_ENV: 'test', DATA_DIR: dataDir, NOTES_URL: `http://127.0.0.1:${notesPort}`, STATS_URL: 'http://127.0.0.1:9',
      MAILER_URL: 'http://127.0.0.1:9', REDIS_URL: undefined, LOG_LEVEL: 'warn', PORT: String(gatewayPort), ADMIN_PORT: String(gatewayAdmin),
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
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('the file format in the browser', () => {
  it('when the page has loaded /assets/file-stream.js, then those are the repository\'s bytes and they pass every test vector', async () => {
    const served = Buffer.from(await (await fetch(`${base}/assets/file-stream.js`)).arrayBuffer());
    expect(served.equals(readFileSync(join(ROOT, 'packages/envelope/file-stream.js')))).toBe(true);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${base}/`);
      await page.waitForFunction('Boolean(window.vanishFileStream)');
      const verifier = readFileSync(join(ROOT, 'packages/envelope/test-vectors/verify.js'), 'utf8');
      const vectors = readFileSync(join(ROOT, 'packages/envelope/test-vectors/file-stream.json'), 'utf8');
      const checks = await page.evaluate(`(function () {\n${verifier}\nreturn self.vanishVerifyFileVectors(${vectors}, window.vanishFileStream);\n})()`);
      expect(checks).toBeGreaterThan(70);
    } finally {
      await context.close();
    }
  });
});

describe('the create page offers files only where it can seal them', () => {
  it('when JavaScript runs in a secure context, then the file field shows and the reason not to is hidden; without JavaScript, the reason shows and no file input is visible', async () => {
    const withScript = await browser.newContext();
    const withoutScript = await browser.newContext({ javaScriptEnabled: false });
    try {
      const page = await withScript.newPage();
      await page.goto(`${base}/`);
      await page.locator('#files-input').waitFor({ state: 'visible' });
      expect(await page.locator('#files-unavailable').isHidden()).toBe(true);
      const plain = await withoutScript.newPage();
      await plain.goto(`${base}/`);
      expect(await plain.locator('#files-unavailable').isVisible()).toBe(true);
      expect(await plain.locator('#files-input').isVisible()).toBe(false);
      // The input has no name: a form sent without the script never carries a file.
      expect(await plain.evaluate(() => document.querySelector('#files-input').getAttribute('name'))).toBeNull();
    } finally {
      await withScript.close();
      await withoutScript.close();
    }
  });
});

/**
 * Watches every request a context makes (pages, fetches, XHR uploads, the service worker's navigation) for
 * what must never leave the browser: each needle is looked for in the URL, the headers and the body, as the
 * request is made; the key (known only once the page has shown it) is looked for afterwards.
 */
function watchRequests(context: BrowserContext, needles: Array<{ what: string; bytes: Buffer }>) {
  const leaks: string[] = [];
  const seen: Array<{ line: string; text: string }> = [];
  const pending: Promise<void>[] = [];
  const find = (line: string, text: string, body: Buffer, needle: { what: string; bytes: Buffer }) => {
    const plain = needle.bytes.toString('utf8');
    if (text.includes(plain) || body.includes(needle.bytes)) leaks.push(`${line} carries ${needle.what}`);
  };
  context.on('request', (request: Request) => {
    pending.push((async () => {
      const line = `${request.method()} ${request.url()}`;
      let url = request.url();
      try { url += ` ${decodeURIComponent(url)}`; } catch { /* not percent-encoded */ }
      const text = `${url} ${JSON.stringify(await request.allHeaders())}`;
      const body = request.postDataBuffer() ?? Buffer.alloc(0);
      for (const needle of needles) find(line, text, body, needle);
      // Bodies are sealed bytes or small forms: keep what the key check needs (a 43-character text).
      seen.push({ line, text: `${text} ${body.length <= 1_000_000 ? body.toString('latin1') : ''}` });
    })().catch((err: Error) => { leaks.push(`a request could not be read: ${err.message}`); }));
  });
  return {
    leaks,
    urls: () => seen.map((request) => request.line),
    settled: () => Promise.all(pending),
    checkKey: (key: string) => { for (const request of seen) if (request.text.includes(key)) leaks.push(`${request.line} carries the key`); },
  };
}

describe('notes with files, written and read in Chromium', () => {
  it('when a 200 MB file and two small ones are sent from the create page and the link is opened in another context, then each file saved is byte-identical, nothing secret was in any request, and a second reveal finds nothing', async () => {
    const dir = join(dataDir, 'originals');
    mkdirSync(dir);
    const big = { name: 'disk image 🔐.bin', path: join(dir, 'disk image 🔐.bin'), digest: '' };
    big.digest = await makeRandomFile(big.path, BIG_BYTES);
    const small = [
      { name: 'kubeconfig', text: `apiVersion: v1\nclusters:\n- cluster: {server: https://k8s.internal:6443}\n  name: prod-${randomBytes(6).toString('hex')}\n` },
      { name: 'ключи доступа.txt', text: `the vault code is ${randomBytes(8).toString('hex')} 🗝️\n` },
    ].map((file) => {
      const path = join(dir, file.name);
      writeFileSync(path, file.text);
      return { ...file, path, digest: createHash('sha256').update(file.text).digest('hex') };
    });
    const bigSample = readFileSync(big.path).subarray(BIG_BYTES / 2, BIG_BYTES / 2 + 64);
    let key = '';
    const needles = [
      { what: 'the big file\'s name', bytes: Buffer.from('disk image') },
      { what: 'a small file\'s name', bytes: Buffer.from('kubeconfig') },
      { what: 'a small file\'s name', bytes: Buffer.from('ключи доступа') },
      { what: 'a small file\'s text', bytes: Buffer.from(small[0]!.text.slice(0, 40)) },
      { what: 'a small file\'s text', bytes: Buffer.from(small[1]!.text.slice(0, 30)) },
      { what: 'the big file\'s bytes', bytes: bigSample },
    ];

    const writer = await browser.newContext();
    const reader = await browser.newContext({ acceptDownloads: true });
    const writerRequests = watchRequests(writer, needles);
    const readerRequests = watchRequests(reader, needles);
    try {
      const page = await writer.newPage();
      await page.goto(`${base}/`);
      await page.locator('#files-input').waitFor({ state: 'visible' });
      await page.setInputFiles('#files-input', [big.path, ...small.map((file) => file.path)]);
      expect(await page.locator('#files-list li').count()).toBe(3);
      const started = performance.now();
      await page.locator('form[data-create] button[type="submit"]').click();
      await page.locator('#note-link').filter({ hasText: '#' }).waitFor({ timeout: 480_000 });
      const uploadSeconds = (performance.now() - started) / 1000;
      const link = (await page.locator('#note-link').textContent())!.trim();
      key = link.slice(link.indexOf('#') + 1);
      expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const readerPage = await reader.newPage();
      await readerPage.goto(link);
      await readerPage.locator('form[data-client-encrypted] button').click();
      await readerPage.locator('#files-opened li').nth(2).waitFor({ timeout: 60_000 });
      const names = await readerPage.locator('#files-opened li .name').allTextContents();
      expect(names).toEqual([big.name, ...small.map((file) => file.name)]);
      // Where a service worker runs, nothing is held in memory: the page does not say it must.
      expect(await readerPage.locator('#files-memory').isHidden()).toBe(true);

      const saved = join(dataDir, 'saved');
      mkdirSync(saved);
      const downloadStarted = performance.now();
      for (const [i, original] of [big, ...small].entries()) {
        const item = readerPage.locator('#files-opened li').nth(i);
        const [download] = await Promise.all([readerPage.waitForEvent('download', { timeout: 120_000 }), item.locator('button').click()]);
        expect(download.suggestedFilename()).toBe(original.name);
        const target = join(saved, `file-${i}`);
        await download.saveAs(target);
        expect(await download.failure()).toBeNull();
        await item.and(readerPage.locator('[data-saved]')).waitFor({ timeout: 120_000 });
        expect(await hashFile(target)).toBe(original.digest);
      }
      const downloadSeconds = (performance.now() - downloadStarted) / 1000;
      process.stdout.write(`files browser: ${BIG_BYTES} + 2 small bytes uploaded in ${uploadSeconds.toFixed(1)} s, saved in ${downloadSeconds.toFixed(1)} s\n`);

      // The link again, in a third context: nothing there.
      const again = await browser.newContext();
      try {
        const response = await (await again.newPage()).goto(link);
        expect(response!.status()).toBe(404);
      } finally {
        await again.close();
      }

      await writerRequests.settled();
      await readerRequests.settled();
      writerRequests.checkKey(key);
      readerRequests.checkKey(key);
      expect(writerRequests.urls().some((url) => url.startsWith('PATCH ') && url.includes('/files/uploads/'))).toBe(true);
      expect(readerRequests.urls().filter((url) => url.startsWith('GET ') && url.includes('/files/d/')).length).toBeGreaterThanOrEqual(3);
      expect([...writerRequests.leaks, ...readerRequests.leaks]).toEqual([]);
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});

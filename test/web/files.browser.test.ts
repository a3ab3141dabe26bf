import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { freePort } from '@vanish/testkit/net';
import { type RunningProcess, runProcess } from '@vanish/testkit/process';

/**
 * DECISIONS 14 (issue 33) in Debian's Chromium, against notes and the gateway as separate processes: the file
 * format's test vectors hold for the bytes the server serves at /assets/file-stream.js; files are offered only
 * where the page can seal them.
 */
// What runs inside the page (playwright's evaluate) sees the browser's globals; this project has no DOM types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;

const ROOT = resolve(__dirname, '../..');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

jest.setTimeout(300_000);

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
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
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

import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { sealTo } from '@vanish/envelope/request-seal';
import { waitFor } from '@vanish/testkit/net';
import { type RunningProcess, runToEnd } from '@vanish/testkit/process';
import { type SmtpSink, startSmtpSink } from '@vanish/testkit/smtp-sink';
import { launchChromium, startAllInOne } from '../support/browser';

/**
 * Requests (DECISIONS 15, issue 34), end to end: the all-in-one process (gateway, notes, mailer, webhooks; SQLite,
 * in-process bus, e-mail to a real SMTP sink), Debian's Chromium in separate contexts (requester, sender, a third
 * person), a page of another loopback origin that embeds the form, and the `vanish` CLI as a process.
 */
const ROOT = resolve(__dirname, '../..');
const CLI = join(ROOT, 'packages/cli/bin/vanish.js');

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

jest.setTimeout(180_000);

/** axe-core through the DevTools protocol (the page's CSP stays as it is): no serious or critical finding. */
async function serious(page: Page): Promise<Array<{ id: string; impact: string | null }>> {
  await page.waitForLoadState('load');
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(`(async () => {
    const result = await window.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => ({ id: v.id, impact: v.impact }));
  })()`);
}

let dataDir: string;
let app: RunningProcess;
let sink: SmtpSink;
let browser: Browser;
let base: string;
let host: Server;
let hostOrigin: string;
let hostPage = '';
const hooks: Array<{ headers: Record<string, string>; body: string }> = [];
let hookServer: Server;
let hookUrl: string;

const vanish = (args: string[], stdin = '') => runToEnd(process.execPath, [CLI, ...args], { env: { ...process.env, VANISH_URL: undefined }, stdin, cwd: dataDir });

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
      else if (!name.endsWith('.key')) files.push(readFileSync(file).toString('latin1'));
    }
  };
  walk(dataDir);
  return files.join('\n') + app.output();
}

/** The requester's page: makes the key pair and the request; returns both links as the page shows them. */
async function makeRequestInBrowser(page: Page, label: string, fields: Record<string, string> = {}, allowFiles = false): Promise<{ requestLink: string; inboxLink: string }> {
  await page.goto(`${base}/request`);
  await page.getByLabel('What you are asking for').fill(label);
  for (const [name, value] of Object.entries(fields)) await page.locator(`[name="${name}"]`).fill(value);
  if (allowFiles) await page.getByLabel('Senders may attach files').check();
  await page.getByRole('button', { name: 'Make the request' }).click();
  await page.locator('#made').waitFor();
  await expect(page.locator('#made').textContent()).resolves.toContain('Your inbox: keep this, do not share it');
  return { requestLink: (await page.locator('#request-link').textContent())!.trim(), inboxLink: (await page.locator('#inbox-link').textContent())!.trim() };
}

async function sendInBrowser(page: Page, requestLink: string, text: string, file?: { name: string; mimeType: string; buffer: Buffer }): Promise<string> {
  await page.goto(requestLink);
  await page.getByLabel('Your answer').fill(text);
  if (file) {
    // The create page's own picker (DECISIONS 14), offered because the request allows files.
    await page.locator('#files-input').waitFor({ state: 'visible' });
    await page.setInputFiles('#files-input', file);
    expect(await page.locator('#files-list li').count()).toBe(1);
  }
  await page.getByRole('button', { name: 'Seal and send' }).click();
  await page.locator('#sent').waitFor();
  return (await page.locator('#receipt-link').textContent())!.trim();
}

async function openInBrowser(page: Page, inboxLink: string, number: number): Promise<string> {
  await page.goto('about:blank');
  await page.goto(inboxLink);
  const button = page.getByRole('button', { name: `Open answer ${number}` });
  await waitFor(() => button.isEnabled());
  await button.click();
  await page.locator('#note-content[data-opened]').waitFor();
  return (await page.locator('#note-content').textContent())!;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'vanish-requests-'));
  sink = await startSmtpSink();
  hookServer = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8'); });
    req.on('end', () => { hooks.push({ headers: req.headers as Record<string, string>, body }); res.writeHead(204).end(); });
  });
  await new Promise<void>((done) => hookServer.listen(0, '127.0.0.1', done));
  hookUrl = `http://127.0.0.1:${(hookServer.address() as AddressInfo).port}/hook`;
  // Another site, on another loopback origin, that embeds the form.
  host = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(hostPage); });
  await new Promise<void>((done) => host.listen(0, '127.0.0.1', done));
  hostOrigin = `http://localhost:${(host.address() as AddressInfo).port}`;
  ({ app, base } = await startAllInOne(dataDir, { SMTP_URL: sink.url, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await sink?.close();
  await new Promise<void>((done) => (host ? host.close(() => done()) : done()));
  await new Promise<void>((done) => (hookServer ? hookServer.close(() => done()) : done()));
  rmSync(dataDir, { recursive: true, force: true });
});

describe('requests in Chromium, three people', () => {
  it('when a requester asks and a sender answers with text and a file, then only the requester\'s inbox opens both, and a third person with the request link learns and consumes nothing', async () => {
    const requester = await browser.newContext({ acceptDownloads: true });
    const sender = await browser.newContext();
    const third = await browser.newContext();
    const seen = [...recordRequests(requester), ...recordRequests(sender)];
    const text = `the database password is ${Date.now()} 🔑`;
    const file = { name: `staging-${Date.now()}.pem`, mimeType: 'application/x-pem-file', buffer: Buffer.concat([Buffer.from('-----BEGIN KEY canary 7c1d-----\n'), randomBytes(3000)]) };

    const { requestLink, inboxLink } = await makeRequestInBrowser(await requester.newPage(), 'The staging database password, please', { max_submissions: '2' }, true);
    const privateKey = inboxLink.split('#')[1]!;
    expect(privateKey).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const senderPage = await sender.newPage();
    await senderPage.goto(requestLink);
    await expect(senderPage.locator('#request-label').textContent()).resolves.toBe('The staging database password, please');
    const receipt = await sendInBrowser(senderPage, requestLink, text, file);
    expect(receipt).toMatch(/\/r\/[A-Za-z0-9_-]{43}$/);

    // The third person has the request link alone: the form, nothing of the answer, no inbox.
    const thirdPage = await third.newPage();
    await thirdPage.goto(requestLink);
    await expect(thirdPage.locator('main').textContent()).resolves.not.toContain(text);
    const requestId = new URL(requestLink).pathname.slice(3);
    expect((await thirdPage.goto(`${base}/i/${requestId}`))!.status()).toBe(404);
    expect((await thirdPage.goto(`${base}/api/inbox/${requestId}.php`))!.status()).toBe(404);

    const inboxPage = await requester.newPage();
    await inboxPage.goto(inboxLink);
    await expect(inboxPage.locator('#submissions li[data-number="1"]').getAttribute('data-state')).resolves.toBe('waiting');
    await expect(openInBrowser(inboxPage, inboxLink, 1)).resolves.toBe(text);
    // The file, listed from the sealed manifest and saved through the note page's download code: the same bytes.
    const opened = inboxPage.locator('#files-opened li');
    await opened.first().waitFor();
    await expect(opened.locator('.name').allTextContents()).resolves.toEqual([file.name]);
    const [download] = await Promise.all([inboxPage.waitForEvent('download'), opened.first().locator('button').click()]);
    expect(download.suggestedFilename()).toBe(file.name);
    const saved = join(dataDir, 'saved-answer.key');
    await download.saveAs(saved);
    await opened.first().and(inboxPage.locator('[data-saved]')).waitFor();
    const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    expect(sha256(readFileSync(saved))).toBe(sha256(file.buffer));
    rmSync(saved);
    // The opened answer's address is the inbox's own (the form posts to it): a real navigation back, not a same-document one.
    await inboxPage.goto('about:blank');
    await inboxPage.goto(inboxLink);
    await expect(inboxPage.locator('#submissions li[data-number="1"]').getAttribute('data-state')).resolves.toBe('opened');

    for (const context of [requester, sender, third]) await context.close();
    for (const request of seen) {
      expect(request).not.toContain(privateKey);
      expect(request).not.toContain(text);
      expect(request).not.toContain(file.name);
      expect(request).not.toContain('canary 7c1d');
    }
    const server = serverSide();
    for (const secret of [privateKey, text, requestId, new URL(inboxLink).pathname.slice(3), file.name, 'canary 7c1d']) expect(server).not.toContain(secret);
  });
});

describe('the requests pages for people everywhere', () => {
  it('when the request, sender, inbox and embedded pages are audited by axe-core in Arabic (right to left; the other tests use them in English), then nothing serious or critical is found', async () => {
    for (const locale of ['ar']) {
      const context = await browser.newContext({ locale, extraHTTPHeaders: { 'Accept-Language': locale } });
      const page = await context.newPage();
      await page.goto(`${base}/request`);
      await page.locator('form[data-make-request]:not([hidden])').waitFor();
      await expect(page.locator('html').getAttribute('dir')).resolves.toBe(locale === 'ar' ? 'rtl' : 'ltr');
      expect([locale, 'request', await serious(page)]).toEqual([locale, 'request', []]);
      await page.locator('#label').fill('a label');
      // Files allowed, so that the sender's and the embedded form show the file picker to the audit too.
      await page.locator('#allow_files').check();
      await page.locator('form[data-make-request] button[type="submit"]').click();
      await page.locator('#made').waitFor();
      expect([locale, 'made', await serious(page)]).toEqual([locale, 'made', []]);
      const requestLink = (await page.locator('#request-link').textContent())!.trim();
      const inboxLink = (await page.locator('#inbox-link').textContent())!.trim();
      await page.goto(requestLink);
      await page.locator('form[data-send-request]:not([hidden]) #files-field:not([hidden])').waitFor();
      expect([locale, 'send', await serious(page)]).toEqual([locale, 'send', []]);
      await page.goto(`${base}/embed/q/${new URL(requestLink).pathname.slice(3)}`);
      await page.locator('form[data-send-request]:not([hidden]) #files-field:not([hidden])').waitFor();
      expect([locale, 'embed', await serious(page)]).toEqual([locale, 'embed', []]);
      await page.goto(inboxLink);
      expect([locale, 'inbox', await serious(page)]).toEqual([locale, 'inbox', []]);
      await context.close();
    }
  });
});

describe('the embedded form on another site', () => {
  it('when a page of another origin embeds the form, then an answer sent in the frame arrives, the host cannot read the frame, and the note page and inbox refuse to be framed', async () => {
    const requester = await browser.newContext();
    const { requestLink, inboxLink } = await makeRequestInBrowser(await requester.newPage(), 'Your API key for the integration', { allowed_origins: hostOrigin, max_submissions: '3' });
    const made = await requester.pages()[0]!.locator('#embed-snippet').textContent();
    expect(made).toContain('integrity="sha384-');
    hostPage = `<!doctype html><html><head><meta charset="utf-8"><title>shop</title></head><body><h1>Support</h1>${made}
<iframe id="inbox" src="${inboxLink}"></iframe><iframe id="note" src="${base}/request"></iframe></body></html>`;

    const visitor = await browser.newContext();
    const page = await visitor.newPage();
    await page.goto(`${hostOrigin}/`);
    const frame = await waitFor(() => page.frames().find((candidate) => candidate.url().startsWith(`${base}/embed/q/`)));
    await frame.locator('form[data-send-request]:not([hidden])').waitFor();
    const text = `embedded secret ${Date.now()}`;
    await frame.getByLabel('Your answer').fill(text);
    await frame.getByRole('button', { name: 'Seal and send' }).click();
    await frame.locator('#sent').waitFor();

    // The host page's own script cannot read the frame's document (another origin).
    const readable = await page.evaluate(`(() => {
      const embedded = document.querySelector('iframe[src*="/embed/q/"]');
      try {
        return embedded && embedded.contentDocument ? embedded.contentDocument.body.textContent : null;
      } catch (e) {
        return null;
      }
    })()`);
    expect(readable).toBeNull();
    // Framing any other vanish page is refused by the browser (X-Frame-Options DENY, frame-ancestors 'none').
    for (const id of ['inbox', 'note']) {
      const other = await page.locator(`iframe#${id}`).elementHandle();
      const otherFrame = await other!.contentFrame();
      await waitFor(async () => (await otherFrame!.url()) !== 'about:blank');
      expect([id, otherFrame!.url()]).toEqual([id, 'chrome-error://chromewebdata/']);
    }
    await visitor.close();

    await expect(openInBrowser(await requester.newPage(), inboxLink, 1)).resolves.toBe(text);
    // A site not in the request's list cannot frame the form at all.
    const plain = await makeRequestInBrowser(await requester.newPage(), 'not embeddable');
    hostPage = `<!doctype html><html><body><iframe id="plain" src="${base}/embed/q/${new URL(plain.requestLink).pathname.slice(3)}"></iframe></body></html>`;
    const stranger = await browser.newPage();
    await stranger.goto(`${hostOrigin}/`);
    const plainFrame = await (await stranger.locator('iframe#plain').elementHandle())!.contentFrame();
    await waitFor(async () => plainFrame!.url() !== 'about:blank');
    expect(plainFrame!.url()).toBe('chrome-error://chromewebdata/');
    await stranger.close();
    await requester.close();
    expect(requestLink).toContain('/q/');
  });
});

describe('the CLI and the browser', () => {
  it('when vanish request, vanish send and vanish inbox run, then the answer round-trips; a CLI request is answered in the browser and a browser request from the CLI', async () => {
    const made = await vanish(['request', '--server', base, '--label', 'your SSH key', '--count', '2', '--key-file', 'inbox.key']);
    expect(made.code).toBe(0);
    const requestLink = made.stdout.trim();
    expect(requestLink).toMatch(/\/q\/[A-Za-z0-9_-]{43}$/);
    expect(made.stderr).toContain('Your inbox: keep this, do not share it');
    expect(statSync(join(dataDir, 'inbox.key')).mode & 0o777).toBe(0o600);

    expect((await vanish(['send', requestLink], 'from the CLI\n')).code).toBe(0);
    const context = await browser.newContext();
    await sendInBrowser(await context.newPage(), requestLink, 'from the browser');
    const listed = await vanish(['inbox', '--key-file', 'inbox.key']);
    expect(listed.stdout).toMatch(/1\t.*waiting\n {2}2\t.*waiting/);
    const one = await vanish(['inbox', '--key-file', 'inbox.key', '--open', '1']);
    expect([one.code, one.stdout]).toEqual([0, 'from the CLI\n']);
    const two = await vanish(['inbox', '--key-file', 'inbox.key', '--open', '2']);
    expect([two.code, two.stdout]).toEqual([0, 'from the browser']);
    expect((await vanish(['send', requestLink], 'a third')).code).toBe(1);

    const { requestLink: browserRequest, inboxLink } = await makeRequestInBrowser(await context.newPage(), 'made in the browser');
    expect((await vanish(['send', browserRequest], 'answered from the CLI')).code).toBe(0);
    await expect(openInBrowser(await context.newPage(), inboxLink, 1)).resolves.toBe('answered from the CLI');
    await context.close();
  });

  it('when vanish send attaches a file to a request that allows files, then vanish inbox --out writes the same bytes; a request of text alone refuses it before anything is sent', async () => {
    const made = await vanish(['request', '--server', base, '--label', 'the signed contract', '--allow-files', '--key-file', 'files.key']);
    expect(made.code).toBe(0);
    const requestLink = made.stdout.trim();
    const bytes = randomBytes(5000);
    writeFileSync(join(dataDir, 'contract.pdf'), bytes);
    const sent = await vanish(['send', requestLink, '--attach', 'contract.pdf'], 'signed, see the file\n');
    expect([sent.code, sent.stderr]).toEqual([0, expect.stringContaining('Sent. Only the requester can open it.')]);
    mkdirSync(join(dataDir, 'received'));
    const opened = await vanish(['inbox', '--key-file', 'files.key', '--open', '1', '--out', 'received']);
    expect([opened.code, opened.stdout]).toEqual([0, 'signed, see the file\n']);
    expect(opened.stderr).toContain('contract.pdf');
    expect(readFileSync(join(dataDir, 'received', 'contract.pdf')).equals(bytes)).toBe(true);

    const textOnly = await vanish(['request', '--server', base, '--label', 'text only', '--key-file', 'text-only.key']);
    const refused = await vanish(['send', textOnly.stdout.trim(), '--attach', 'contract.pdf'], 'x');
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('this request takes text only')]);
    expect((await vanish(['inbox', '--key-file', 'text-only.key'])).stdout).toContain('(nothing yet)');
  });
});

describe('a standing drop box', () => {
  it('when a count-3 request takes three answers, then the fourth is 410, and an e-mail and a signed request.submitted webhook arrive for each', async () => {
    const made = await vanish(['request', '--server', base, '--label', 'quarterly documents', '--count', '3', '--notify', 'desk@example.com', '--webhook', hookUrl, '--key-file', 'box.key', '--json']);
    expect(made.code).toBe(0);
    const answer = JSON.parse(made.stdout) as { request_url: string; webhook_secret: string; request_ref: string };
    const api = `${base}/api/request/${new URL(answer.request_url).pathname.slice(3)}.php`;
    const { public_key: publicKey } = await (await fetch(api)).json() as { public_key: string };
    const mailsBefore = sink.messages.length;
    for (let i = 1; i <= 4; i += 1) {
      const sealed = await sealTo(publicKey, `document ${i}`);
      const res = await fetch(api, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: sealed.content, key_check: sealed.keyCheck }) });
      expect([i, res.status]).toEqual([i, i <= 3 ? 200 : 410]);
    }
    const mails = (await sink.waitForMessages(mailsBefore + 3, 60_000)).slice(mailsBefore);
    expect(mails.map((mail) => mail.to)).toEqual([['desk@example.com'], ['desk@example.com'], ['desk@example.com']]);
    expect(mails.map((mail) => mail.parsed.text ?? '').join('\n')).not.toContain('quarterly documents');
    await waitFor(() => hooks.filter((hook) => hook.body.includes('request.submitted')).length >= 3, { timeoutMs: 60_000 });
    const verifier = new Webhook(answer.webhook_secret);
    const submitted = hooks.filter((hook) => hook.body.includes('request.submitted')).map((hook) => verifier.verify(hook.body, hook.headers) as { event: string; data: { request_ref: string; submission: number } });
    expect(submitted.map((event) => [event.event, event.data.request_ref, event.data.submission]).sort()).toEqual([1, 2, 3].map((n) => ['request.submitted', answer.request_ref, n]));
    await new Promise((settle) => setTimeout(settle, 500));
    expect(hooks.filter((hook) => hook.body.includes('request.submitted'))).toHaveLength(3);
  });
});

import { createHash } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@vanish/testkit/net';
import { type CommandResult, type RunningProcess, runProcess, runToEnd } from '@vanish/testkit/process';
import { CLEARED_ENV } from '../support/api-client';

/*
 * Issue 36 against the built all-in-one, with the repository's `vanish` as a user runs it:
 * - DECISIONS 16: `vanish create` keeps each receipt link in a 0600 file; `vanish receipts list` says each note's state
 *   after one is read and one ended; `vanish receipts export` writes one file of signed receipts that
 *   `vanish receipts verify` and `npm run verify-receipt` check offline, and that fails when one byte changes.
 * - DECISIONS 17: the gateway serves the manifest the build wrote; `vanish verify-site` passes against the service and
 *   fails, naming the file, through a proxy that changes one byte of one asset; a reveal's receipt row names the
 *   manifest's digest.
 */
const ROOT = resolve(__dirname, '../..');
const MAIN = join(ROOT, 'services/all-in-one/dist/main.js');
const BIN = join(ROOT, 'packages/cli/bin/vanish.js');
const VERIFY_RECEIPT = join(ROOT, 'services/notes/dist/cli/verify-receipt.js');
const MANIFEST = join(ROOT, 'services/notes/dist/release/vanish-release.json');
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

jest.setTimeout(180_000);

let work: string;
let app: RunningProcess;
let base: string;
let proxy: Server;
let proxyBase: string;

const vanish = (args: string[], stdin = ''): Promise<CommandResult> =>
  runToEnd(process.execPath, [BIN, ...args], { env: { ...process.env, VANISH_URL: undefined, VANISH_PASSCODE: undefined, VANISH_CONFIG_DIR: join(work, 'config') }, stdin });

beforeAll(async () => {
  for (const file of [MAIN, MANIFEST, VERIFY_RECEIPT]) if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm run test:e2e does)`);
  work = mkdtempSync(join(tmpdir(), 'vanish-receipts-release-'));
  const names = ['PORT', 'ADMIN_PORT', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'WEBHOOKS_ADMIN_PORT'];
  const ports: Record<string, string> = {};
  for (const name of names) ports[name] = String(await freePort());
  base = `http://127.0.0.1:${ports.PORT}`;
  app = await runProcess({
    script: MAIN,
    env: {
      ...CLEARED_ENV, ...ports, DATA_DIR: join(work, 'data'), PUBLIC_BASE_URL: base,
      RATE_LIMIT_CREATE_PER_HOUR: '100000', RATE_LIMIT_VIEW_PER_HOUR: '100000', RATE_LIMIT_STATS_PER_HOUR: '100000',
    },
    readyLine: 'all-in-one ready',
    readyTimeoutMs: 90_000,
    stopTimeoutMs: 30_000,
  });
  // A proxy in front of the service that changes one byte of one stylesheet, as a compromised server or CDN could.
  proxy = createServer((req, res) => {
    const upstream = request(`${base}${req.url}`, { method: req.method, headers: { ...req.headers, host: new URL(base).host } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.url === '/assets/app.css') body[body.length - 2] = body[body.length - 2]! ^ 0x01;
        res.writeHead(answer.statusCode ?? 502, answer.headers).end(body);
      });
    });
    req.pipe(upstream);
  });
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
  proxyBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.stop();
  await new Promise<void>((done) => (proxy ? proxy.close(() => done()) : done()));
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Ends a note as the receipt page does: its confirmation page's single-use token, a same-origin POST. */
async function endFromReceipt(receiptUrl: string): Promise<void> {
  const confirm = await (await fetch(`${receiptUrl}?end=confirm`)).text();
  const token = /name="form_token" value="([^"]+)"/.exec(confirm)![1]!;
  const ended = await fetch(receiptUrl, { method: 'POST', headers: { ...FORM, origin: base }, body: `form_token=${encodeURIComponent(token)}`, redirect: 'manual' });
  expect(ended.status).toBe(303);
}

describe('the CLI receipt wallet and a release anyone can check', () => {
  it('when three notes are made with vanish create, one read and one ended, then receipts list says so, and the export verifies offline until one byte changes', async () => {
    const made: Array<{ link: string; receipt: string }> = [];
    for (const text of ['first', 'second', 'third']) {
      const created = await vanish(['create', '--server', base], text);
      expect(created.code).toBe(0);
      made.push({ link: created.stdout.trim(), receipt: /(http:\/\/\S+\/r\/[A-Za-z0-9_-]{43})/.exec(created.stderr)![1]! });
    }
    const file = join(work, 'config', 'receipts.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(work, 'config')).mode & 0o777).toBe(0o700);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { receipts: Array<{ receipt_url: string }> }).receipts.map((r) => r.receipt_url)).toEqual(made.map((m) => m.receipt));
    // The file holds the receipt links only: no note link, no key.
    expect(readFileSync(file, 'utf8')).not.toMatch(/#[A-Za-z0-9_-]{43}|\/[0-9a-f]{8}-[0-9a-f]{4}-/);

    await expect(vanish(['open', made[0]!.link])).resolves.toMatchObject({ code: 0, stdout: 'first' });
    await endFromReceipt(made[1]!.receipt);

    const listed = await vanish(['receipts', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split('\n').filter((line) => !line.startsWith('  ') && line !== '')).toEqual([
      expect.stringMatching(/^ended, views used 1 of 1, created .* UTC, ended .* UTC \(views\)$/),
      expect.stringMatching(/^ended, views used 0 of 1, .*\(creator\)$/),
      expect.stringMatching(/^waiting, views used 0 of 1, created .* UTC$/),
    ]);

    const exported = join(work, 'receipts-export.json');
    await expect(vanish(['receipts', 'export', '--out', exported])).resolves.toMatchObject({ code: 0, stderr: expect.stringContaining('3 signed receipts written') });
    expect(statSync(exported).mode & 0o777).toBe(0o600);
    const keys = join(work, 'keys.json');
    writeFileSync(keys, await (await fetch(`${base}/.well-known/vanish-receipt-keys.json`)).text());
    // Offline from here: the CLI's own check and the repository's verify-receipt.
    const cliCheck = await vanish(['receipts', 'verify', exported, '--keys', keys]);
    expect(cliCheck).toMatchObject({ code: 0, stdout: expect.stringMatching(/^VALID: 3 receipts/) });
    const repoCheck = await runToEnd(process.execPath, [VERIFY_RECEIPT, exported, '--keys', keys]);
    expect(repoCheck).toMatchObject({ code: 0, stdout: expect.stringMatching(/^VALID: 3 receipts/) });

    const bytes = readFileSync(exported);
    const at = bytes.indexOf('"views_used":1') + '"views_used":'.length;
    bytes[at] = '0'.charCodeAt(0);
    const changed = join(work, 'receipts-changed.json');
    writeFileSync(changed, bytes);
    await expect(vanish(['receipts', 'verify', changed, '--keys', keys])).resolves.toMatchObject({ code: 1, stdout: expect.stringContaining('INVALID: receipt 1: the signature does not match the receipt') });
    await expect(runToEnd(process.execPath, [VERIFY_RECEIPT, changed, '--keys', keys])).resolves.toMatchObject({ code: 1, stdout: expect.stringContaining('INVALID') });
  });

  it('when verify-site checks the service, then it passes with the manifest the build wrote, the gateway serves that manifest, and a reveal records its digest', async () => {
    const served = await fetch(`${base}/.well-known/vanish-release.json`);
    expect(served.status).toBe(200);
    const text = await served.text();
    expect(text).toBe(readFileSync(MANIFEST, 'utf8'));
    const checked = await vanish(['verify-site', '--manifest', MANIFEST, base]);
    // Every asset the release lists (pages, files, requests): verify-site checks each one's bytes.
    const listed = Object.keys((JSON.parse(text) as { assets: Record<string, string> }).assets).length;
    expect(listed).toBeGreaterThanOrEqual(11);
    expect(checked).toMatchObject({ code: 0, stdout: expect.stringMatching(new RegExp(`^OK: http://127\\.0\\.0\\.1:\\d+ serves exactly the assets of vanish \\d+\\.\\d+\\.\\d+ \\(commit [^)]+\\): ${listed} files, each the same SHA-384\n$`)) });

    const created = await vanish(['create', '--server', base], 'for the digest');
    await expect(vanish(['open', created.stdout.trim()])).resolves.toMatchObject({ code: 0 });
    const receiptId = /\/r\/([A-Za-z0-9_-]{43})/.exec(created.stderr)![1]!;
    const receipt = (await (await fetch(`${base}/api/receipt/${receiptId}.php`)).json()) as { receipt: { timeline: Array<{ event: string; release_digest?: string }> } };
    expect(receipt.receipt.timeline.find((entry) => entry.event === 'reveal')!.release_digest).toBe(`sha256:${createHash('sha256').update(text).digest('hex')}`);
  });

  it('when one byte of one served stylesheet is changed on the way, then verify-site fails and names that file', async () => {
    const checked = await vanish(['verify-site', '--manifest', MANIFEST, proxyBase]);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toMatch(/^DIFFERENT: /);
    expect(checked.stdout).toMatch(/\n {2}\/assets\/app\.css: served sha384-\S+, release \S+ has sha384-\S+\n/);
    // Only that file: the others are the release's.
    expect(checked.stdout.split('\n').filter((line) => line.startsWith('  '))).toHaveLength(1);
    expect(checked.stderr).toContain('1 difference from the closest release this vanish knows');
  });
});

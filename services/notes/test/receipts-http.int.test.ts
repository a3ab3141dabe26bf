import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@vanish/common';
import { createNotesService, loadNotesConfig, type NotesService } from '../src';
import { verifySignedReceipt } from '../src/receipts/receipt-signer';
import { loadReleaseManifest, releaseDigest } from '../src/release/release-manifest';
import { postJson, send } from './support/api-client';

/** Receipts over HTTP (DECISIONS 12) on the real notes service and SQLite. */
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const SLACK_PREVIEW = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

const tokenOf = (page: string): string => {
  const match = /name="form_token" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('no form token on the page');
  return match[1]!;
};

describe('receipts over HTTP', () => {
  let dataDir: string;
  let service: NotesService;
  let base: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'notes-receipts-'));
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`, RECEIPT_SIGNING_KEYS: `r2:${KEY(5)},r1:${KEY(4)}`,
      PUBLIC_BASE_URL: 'http://127.0.0.1:1',
    });
    service = await createNotesService(config, { logger: silentLogger, kdf: { N: 1024, r: 8, p: 1 } });
    const { port } = await service.start();
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const create = async (body: Record<string, unknown>) => {
    const created = await postJson(base, body);
    expect(created.status).toBe(200);
    const receiptUrl = new URL(created.json.receipt_url as string);
    expect(receiptUrl.pathname).toMatch(/^\/r\/[A-Za-z0-9_-]{43}$/);
    expect(receiptUrl.pathname).not.toContain(created.json.uuid);
    return { uuid: created.json.uuid as string, receiptPath: receiptUrl.pathname, id: receiptUrl.pathname.slice(3) };
  };

  it('when a preview bot fetches the page (GET and HEAD) and a browser reveals the note, then the signed receipt says so and verifies with the published keys', async () => {
    const note = await create({ content: 'the secret text', max_views: 1 });
    expect((await send(base, 'GET', `/${note.uuid}`, { headers: { 'user-agent': SLACK_PREVIEW } })).status).toBe(200);
    expect((await send(base, 'HEAD', `/${note.uuid}`, { headers: { 'user-agent': SLACK_PREVIEW } })).status).toBe(200);

    // The receipt page and its JSON show nothing of the note and use no view. Without the creator mark the
    // page is first the wrong-link guard (DECISIONS 16); the creator goes on with ?as=creator.
    const guard = await send(base, 'GET', note.receiptPath);
    expect(guard.status).toBe(200);
    expect(guard.text).toContain('This is a receipt link, not a note');
    expect(guard.text).not.toMatch(/form_token|End this note now|link preview bot/);
    const page = await send(base, 'GET', `${note.receiptPath}?as=creator`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('the secret text');
    expect(page.text).toContain('link preview bot');
    expect(page.text).toContain('End this note now');
    expect((await send(base, 'HEAD', note.receiptPath)).status).toBe(200);
    expect((await send(base, 'GET', `/api/receipt/${note.id}.php`)).json.receipt).toMatchObject({ views_used: 0, views_left: 1, status: 'active' });
    expect((await send(base, 'GET', `/api/view/${note.uuid}.php`)).json.note.current_views).toBe(0);

    const notePage = await send(base, 'GET', `/${note.uuid}`, { headers: { 'user-agent': FIREFOX } });
    const revealed = await send(base, 'POST', `/${note.uuid}`, { headers: { ...FORM, 'user-agent': FIREFOX }, body: `form_token=${encodeURIComponent(tokenOf(notePage.text))}` });
    expect(revealed.status).toBe(200);
    expect(revealed.text).toContain('the secret text');

    const answer = await send(base, 'GET', `/api/receipt/${note.id}.php`);
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.json.receipt).toMatchObject({ status: 'ended', end_reason: 'views', views_used: 1, views_left: 0 });
    expect(answer.json.receipt.timeline.map((entry: { event: string; client?: string }) => `${entry.event}${entry.client ? `:${entry.client}` : ''}`))
      .toEqual(['created', 'page_fetch:link_preview_bot', 'page_fetch:link_preview_bot', 'page_fetch:browser', 'reveal', 'end']);
    // DECISIONS 17: the reveal names the release manifest served then, the bytes at /.well-known/vanish-release.json.
    const release = await send(base, 'GET', '/.well-known/vanish-release.json', { unchecked: true });
    expect(release.status).toBe(200);
    expect(release.text).toBe(loadReleaseManifest().text);
    expect(answer.json.receipt.timeline[4]).toEqual({ at: expect.any(String), event: 'reveal', release_digest: releaseDigest(release.text) });
    expect(release.json.assets['/assets/app.js']).toMatch(/^sha384-/);
    expect(answer.text).not.toContain(note.uuid);
    expect(answer.text).not.toContain('the secret text');

    const keys = await send(base, 'GET', '/.well-known/vanish-receipt-keys.json', { unchecked: true });
    expect(keys.status).toBe(200);
    expect(keys.json.keys.map((key: { kid: string }) => key.kid)).toEqual(['r2', 'r1']);
    expect(verifySignedReceipt(answer.json, keys.json)).toEqual({ valid: true, kid: 'r2' });
    const tampered = JSON.parse(answer.text.replace('"views_used":1', '"views_used":0'));
    expect(verifySignedReceipt(tampered, keys.json)).toMatchObject({ valid: false });
  });

  it('when an id is unknown or malformed, then the page and the JSON answer the same 404', async () => {
    const unknown = 'A'.repeat(43);
    const answers = await Promise.all([
      send(base, 'GET', `/api/receipt/${unknown}.php`),
      send(base, 'GET', '/api/receipt/short.php'),
      send(base, 'GET', '/api/receipt/%E0%A4.php'),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(404);
      expect(answer.json).toEqual({ error: 'Receipt not found', code: 'NOT_FOUND', details: { parameter: null, message: 'Receipt not found' } });
    }
    const pages = await Promise.all([send(base, 'GET', `/r/${unknown}`), send(base, 'GET', '/r/short'), send(base, 'GET', '/r/%ff%fe')]);
    for (const page of pages) {
      expect(page.status).toBe(404);
      expect(page.text).toBe(pages[0]!.text);
    }
    expect(pages[0]!.text).toContain('This receipt does not exist');
    // An end-now form for a receipt that does not exist is refused like any forged form.
    expect((await send(base, 'POST', `/r/${unknown}`, { headers: FORM, body: 'form_token=x' })).status).toBe(403);
  });

  it('when the creator ends the note from the receipt page, then the link is not found, metadata is 404, the receipt shows the end, and the form cannot be used twice', async () => {
    const note = await create({ content: 'end me', max_views: 3 });
    // Ending asks first (DECISIONS 16): the receipt page has no token, only the confirmation page does.
    expect((await send(base, 'GET', `${note.receiptPath}?as=creator`)).text).not.toContain('form_token');
    const token = tokenOf((await send(base, 'GET', `${note.receiptPath}?end=confirm`)).text);
    // Another site's form is refused even with a valid token.
    expect((await send(base, 'POST', note.receiptPath, { headers: { ...FORM, origin: 'https://evil.example' }, body: `form_token=${encodeURIComponent(token)}` })).status).toBe(403);
    const ended = await send(base, 'POST', note.receiptPath, { headers: { ...FORM, 'sec-fetch-site': 'same-origin' }, body: `form_token=${encodeURIComponent(token)}` });
    expect(ended.status).toBe(303);
    expect(ended.headers.location).toBe(note.receiptPath);
    expect((await send(base, 'GET', `/${note.uuid}`)).status).toBe(404);
    expect((await send(base, 'GET', `/api/view/${note.uuid}.php`)).status).toBe(404);
    const again = await send(base, 'POST', note.receiptPath, { headers: FORM, body: `form_token=${encodeURIComponent(token)}` });
    expect(again.status).toBe(403);
    // An ended note has nothing left to guard: its receipt shows at once.
    const page = await send(base, 'GET', note.receiptPath);
    expect(page.text).toContain('ended by you from this receipt');
    expect(page.text).not.toContain('End this note now');
    const receipt = (await send(base, 'GET', `/api/receipt/${note.id}.php`)).json.receipt;
    expect(receipt).toMatchObject({ status: 'ended', end_reason: 'creator' });
    const events = await service.knex('outbox').select('body');
    expect(events.map((row: { body: string }) => JSON.parse(row.body)).filter((e: { event: string; data: { reason?: string } }) => e.event === 'note.destroyed' && e.data.reason === 'creator')).toHaveLength(1);
  });

  it('when the creator who said so on the guard changes the language, then the switcher keeps ?as=creator and the receipt stays the receipt', async () => {
    const note = await create({ content: 'kept in any language', max_views: 1 });
    const page = await send(base, 'GET', `${note.receiptPath}?as=creator`);
    const switcher = /<form method="get" class="settings"[\s\S]*?<\/form>/.exec(page.text)?.[0] ?? '';
    expect(switcher).toContain('<input type="hidden" name="as" value="creator">');
    // What the browser sends when the form is submitted: its selects and the hidden field, nothing else.
    const switched = await send(base, 'GET', `${note.receiptPath}?lang=de&theme=dark&as=creator`);
    expect(switched.status).toBe(303);
    expect(switched.headers.location).toBe(`${note.receiptPath}?as=creator`);
    const cookie = ([] as string[]).concat(switched.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).join('; ');
    const shown = await send(base, 'GET', switched.headers.location as string, { headers: { cookie } });
    expect(shown.status).toBe(200);
    expect(shown.text).toContain('<html lang="de"');
    expect(shown.text).toContain('?end=confirm');
    // Without it (a stranger's browser, no creator mark) the same page is the guard, whose switcher keeps nothing.
    const guard = await send(base, 'GET', note.receiptPath);
    expect(guard.text).not.toContain('?end=confirm');
    expect(guard.text).not.toContain('name="as"');
  });

  it('when the created page makes a note, then it marks this browser for that receipt only (DECISIONS 16): the marked request sees the receipt, an unmarked one the guard', async () => {
    const form = await send(base, 'GET', '/');
    const created = await send(base, 'POST', '/', { headers: { ...FORM, 'sec-fetch-site': 'same-origin' }, body: `form_token=${encodeURIComponent(tokenOf(form.text))}&content=marked&expiry_type=view&max_views=1` });
    expect(created.status).toBe(200);
    const receiptPath = /\/r\/[A-Za-z0-9_-]{43}/.exec(created.text)![0];
    const cookie = created.headers['set-cookie'];
    expect(cookie).toMatch(new RegExp(`^vanish_creator=1; Max-Age=\\d+; Path=${receiptPath}; Expires=[^;]+; HttpOnly; SameSite=Lax$`));
    const marked = await send(base, 'GET', receiptPath, { headers: { cookie: 'vanish_creator=1' } });
    expect(marked.text).toContain('Receipt of your note');
    expect(marked.text).toContain(`href="${receiptPath}?end=confirm"`);
    expect((await send(base, 'GET', receiptPath)).text).toContain('This is a receipt link, not a note');
  });
});

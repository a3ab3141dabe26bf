import express from 'express';
import { ManualClock, listen, type Listening, type Logger } from '@vanish/common';
import type { CreateNoteInput, CreatedNote, NoteMetadata, NotesApi } from '../domain/notes';
import { FormTokens, MemoryUsedTokenStore } from './form-tokens';
import { createPageRoutes } from './page-routes';
import { parseExpiryPresets } from './pages/expiry-presets';
import { LOCALES, Translations } from './pages/i18n';

/** A NotesApi whose answers each test sets: the pages are tested without a database. */
class ScriptedNotes implements NotesApi {
  created: CreateNoteInput[] = [];
  create: NotesApi['create'] = async (input) => {
    this.created.push(input);
    return { uuid: UUID, url: `http://127.0.0.1/${UUID}`, expiryType: input.expiryType, expiresAt: new Date('2026-03-01T12:00:00Z'), maxViews: input.maxViews, hasPasscode: input.passcode !== null, createdAt: new Date('2026-02-28T12:00:00Z') } satisfies CreatedNote;
  };
  metadata: NotesApi['metadata'] = async () => META;
  reveal: NotesApi['reveal'] = async () => ({ outcome: 'wrong_passcode', attemptsLeft: 3, lockedOut: false });
  takedown: NotesApi['takedown'] = async () => false;
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child() { return silent; } };
const UUID = '0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10';
const META: NoteMetadata = { hasPasscode: true, expiryType: 'view', expiresAt: new Date('2026-03-01T12:00:00Z'), maxViews: 2, currentViews: 0, createdAt: new Date('2026-02-28T12:00:00Z') };

describe('page routes: languages, theme and expiry presets (issue 20)', () => {
  const translations = new Translations();
  let notes: ScriptedNotes;
  let server: Listening;
  let base: string;

  beforeEach(async () => {
    notes = new ScriptedNotes();
    const clock = new ManualClock();
    const app = express();
    app.use(createPageRoutes({
      notes, formTokens: new FormTokens(Buffer.alloc(32, 7), new MemoryUsedTokenStore(clock), clock), logger: silent,
      publicBaseUrl: 'http://127.0.0.1', expiryPresets: parseExpiryPresets('5m,1h,1d,7d,30d'), retentionHours: 720, translations,
    }));
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.port}`;
  });
  afterEach(async () => { await server.close(); });

  const get = async (path: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
    return { status: res.status, headers: res.headers, body: await res.text() };
  };
  const lang = (body: string) => /<html lang="([^"]+)" dir="([^"]+)"/.exec(body)?.slice(1);
  const post = async (path: string, form: Record<string, string>, headers: Record<string, string> = {}) => {
    const res = await fetch(`${base}${path}`, {
      method: 'POST', body: new URLSearchParams(form).toString(), redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers },
    });
    return { status: res.status, body: await res.text() };
  };
  const token = (body: string) => /name="form_token" value="([^"]+)"/.exec(body)![1]!;

  it('when the create form carries the time controls (DECISIONS 16), then the page\'s UTC time and numbers reach the domain; a bad one is refused on the form, in the reader\'s language', async () => {
    const page = (await get('/')).body;
    expect(page).toContain('<details id="time-controls-fields">');
    const created = await post('/', {
      form_token: token(page), content: 'later', expiry_type: 'view', max_views: '2',
      available_from: '2026-12-24T18:00', shrink_after_first_view_minutes: '10', release_after_silence_hours: '',
    });
    expect(created.status).toBe(200);
    expect(notes.created[0]).toMatchObject({ availableFrom: new Date('2026-12-24T18:00:00Z'), shrinkAfterFirstViewMinutes: 10 });
    expect(notes.created[0]!.releaseAfterSilenceHours).toBeUndefined();
    const refused = await post('/', { form_token: token((await get('/')).body), content: 'x', release_after_silence_hours: '0' }, { cookie: 'lang=de' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('<details id="time-controls-fields" open>');
    expect(refused.body).toContain('Geben Sie eine ganze Zahl von Stunden von 1 bis 8760 an');
  });

  it('when nothing is chosen, then the page is English; Accept-Language picks a language, a region falling back to its language', async () => {
    expect(lang((await get('/')).body)).toEqual(['en', 'ltr']);
    expect(lang((await get('/', { 'accept-language': 'de-AT,de;q=0.9,en;q=0.5' })).body)).toEqual(['de', 'ltr']);
    expect(lang((await get('/', { 'accept-language': 'pt-BR' })).body)).toEqual(['pt-BR', 'ltr']);
    expect(lang((await get('/', { 'accept-language': 'ar-EG' })).body)).toEqual(['ar', 'rtl']);
    expect(lang((await get('/', { 'accept-language': 'sw, tlh' })).body)).toEqual(['en', 'ltr']);
    const answer = await get('/');
    expect(answer.headers.get('vary')).toMatch(/Cookie/);
    expect(answer.headers.get('vary')).toMatch(/Accept-Language/);
  });

  it('when the switcher is used, then a Lax first-party cookie remembers it, wins over Accept-Language, and the page is shown again at its own address', async () => {
    const switched = await get(`/${UUID}?lang=uk&theme=dark`);
    expect(switched.status).toBe(303);
    expect(switched.headers.get('location')).toBe(`/${UUID}`);
    const cookies = switched.headers.getSetCookie();
    expect(cookies).toHaveLength(2);
    for (const cookie of cookies) {
      expect(cookie).toMatch(/^(lang=uk|theme=dark);/);
      expect(cookie).toMatch(/SameSite=Lax/);
      expect(cookie).toMatch(/HttpOnly/);
      expect(cookie).toMatch(/Path=\//);
    }
    const page = await get(`/${UUID}`, { cookie: 'lang=uk; theme=dark', 'accept-language': 'fr' });
    expect(lang(page.body)).toEqual(['uk', 'ltr']);
    expect(page.body).toContain('data-theme="dark"');
    expect(page.body).toContain('Показати нотатку');
  });

  it('when the switcher is sent odd values, then nothing is remembered and the redirect stays on this site', async () => {
    const odd = await get('/?lang=xx&theme=<b>');
    expect(odd.status).toBe(303);
    expect(odd.headers.getSetCookie()).toEqual([]);
    expect(odd.headers.get('location')).toBe('/');
    const page = await get('/', { cookie: 'lang=../../etc; theme=neon' });
    expect(lang(page.body)).toEqual(['en', 'ltr']);
    expect(page.body).not.toContain('data-theme=');
  });

  it.each([...LOCALES])('when the %s reveal POST fails on the passcode, then its answer keeps the language of the cookie', async (locale) => {
    const note = await get(`/${UUID}`, { cookie: `lang=${locale}` });
    const answer = await post(`/${UUID}`, { form_token: token(note.body), passcode: 'wrong' }, { cookie: `lang=${locale}` });
    expect(answer.status).toBe(400);
    expect(lang(answer.body)?.[0]).toBe(locale);
    expect(answer.body).toContain(translations.get(locale).t('note.wrongPasscode', { tries: 3 }));
  });

  it('when a preset is chosen, then the note lives exactly that long (less than the API\'s hour too); custom uses the hours', async () => {
    const page = await get('/');
    expect(page.body).toContain('<option value="5m">5 minutes</option>');
    expect(page.body).toMatch(/<option value="1d" selected>1 day<\/option>/);
    expect(page.body).toContain('<option value="custom">');
    await post('/', { form_token: token(page.body), content: 'x', expiry_type: 'time', expiry_preset: '5m', expiry_time: '24' });
    await post('/', { form_token: token((await get('/')).body), content: 'x', expiry_type: 'both', expiry_preset: '7d', expiry_time: '24', max_views: '2' });
    await post('/', { form_token: token((await get('/')).body), content: 'x', expiry_type: 'time', expiry_preset: 'custom', expiry_time: '3' });
    await post('/', { form_token: token((await get('/')).body), content: 'x', expiry_type: 'time', expiry_time: '5' });
    expect(notes.created.map((input) => input.expiryHours)).toEqual([5 / 60, 168, 3, 5]);
  });

  it('when a note is created on the form, then the created page carries the QR code of its link, drawn on the server', async () => {
    const page = await get('/');
    const answer = await post('/', { form_token: token(page.body), content: 'x', expiry_type: 'view', max_views: '1' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/<figure class="qr"><svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*>.*<\/svg>\s*<figcaption/s);
  });

  it('when a preset that is not offered is sent, then the form comes back refused, in the reader\'s language', async () => {
    const page = await get('/', { cookie: 'lang=de' });
    const answer = await post('/', { form_token: token(page.body), content: 'x', expiry_type: 'time', expiry_preset: '9h' }, { cookie: 'lang=de' });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain(translations.get('de').t('create.error.expiry_preset'));
    expect(notes.created).toEqual([]);
  });

  it('when a note is created from a page, then the page\'s language goes with it (for its link e-mail)', async () => {
    const page = await get('/', { cookie: 'lang=ja' });
    await post('/', { form_token: token(page.body), content: 'x', expiry_type: 'view', max_views: '1', send_link_email: 'a@example.com' }, { cookie: 'lang=ja' });
    expect(notes.created[0]).toMatchObject({ lang: 'ja', sendLinkEmail: 'a@example.com' });
  });

  it('when a validation error comes back, then it is said in the page\'s language, not the API\'s English', async () => {
    const page = await get('/', { cookie: 'lang=fr' });
    const answer = await post('/', { form_token: token(page.body), content: 'x', expiry_type: 'view', max_views: '500' }, { cookie: 'lang=fr' });
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('La note n’a pas été créée');
    expect(answer.body).toContain(translations.get('fr').t('create.error.max_views', { min: 1, max: 100 }));
    expect(answer.body).not.toContain('must be an integer');
  });
});

import { LOCALES, Translations, readCatalogue, type Locale } from '../http/pages/i18n';
import { createPage, createdPage, notYetPage, type PageContext } from '../http/pages/templates';
import { CREATOR_MARK_COOKIE, creatorMark, hasCreatorMark } from './creator-mark';
import { confirmEndPage, receiptGuardPage, receiptNotFoundPage, receiptPage, walletPage } from './receipt-pages';
import type { ReceiptBody } from './receipt-service';

const translations = new Translations();
const context = (locale: Locale): PageContext => ({ t: translations.get(locale), theme: 'dark', languages: translations.names(), switcher: true });

const ENDED: ReceiptBody = {
  version: 1, issuer: 'http://127.0.0.1', note_ref: 'ref', created_at: '2026-03-01 09:00:00', expiry_type: 'both', max_views: 2,
  has_passcode: true, expires_at: '2026-03-02 09:00:00', views_used: 1, views_left: 0, status: 'ended', ended_at: '2026-03-01 10:00:05',
  end_reason: 'lockout', purge_after: '2026-03-31 10:00:05', issued_at: '2026-03-01 11:00:00',
  timeline: [
    { at: '2026-03-01 09:00:00', event: 'created' },
    { at: '2026-03-01 09:10:00', event: 'page_fetch', client: 'link_preview_bot' },
    { at: '2026-03-01 09:20:00', event: 'page_fetch', client: 'browser' },
    { at: '2026-03-01 09:30:00', event: 'reveal' },
    { at: '2026-03-01 10:00:04', event: 'wrong_passcode' },
    { at: '2026-03-01 10:00:05', event: 'end', reason: 'lockout' },
  ],
};
const ACTIVE: ReceiptBody = { ...ENDED, status: 'active', ended_at: null, end_reason: null, purge_after: null, views_left: 1, timeline: ENDED.timeline.slice(0, 2) };
const CREATED = {
  uuid: '0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10', url: 'http://127.0.0.1/0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10', expiryType: 'view' as const,
  expiresAt: new Date('2026-03-01T12:00:00Z'), maxViews: 1, hasPasscode: false, createdAt: new Date('2026-02-28T12:00:00Z'),
  receiptUrl: 'http://127.0.0.1/r/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', noteRef: 'f'.repeat(32), webhookSecret: 'whsec_c2VjcmV0',
};

/** DECISIONS 16: a held dead-man's switch with a shrink, and one released at a time. */
const HELD: ReceiptBody = {
  ...ACTIVE, shrink_after_first_view_minutes: 10,
  release: { kind: 'silence', state: 'held', opens_at: '2026-03-03 09:00:00', silence_hours: 48, released_at: null },
  timeline: [...ACTIVE.timeline, { at: '2026-03-01 09:30:00', event: 'checkin' }],
};
const RELEASED: ReceiptBody = {
  ...ENDED, release: { kind: 'at', state: 'released', opens_at: '2026-03-01 09:25:00', silence_hours: null, released_at: '2026-03-01 09:25:01' },
  timeline: [...ENDED.timeline.slice(0, 3), { at: '2026-03-01 09:25:00', event: 'release' }, { at: '2026-03-01 09:30:00', event: 'reveal' }, { at: '2026-03-01 09:30:00', event: 'shrink' }],
};

/** The pages a reader of another language must see without a word of English left in them. */
function pages(locale: Locale): Record<string, string> {
  const ctx = context(locale);
  return {
    receiptEnded: receiptPage(ctx, ENDED, null, '/api/receipt/x.php'),
    receiptActive: receiptPage(ctx, ACTIVE, '/r/x?end=confirm', '/api/receipt/x.php'),
    receiptGuard: receiptGuardPage(ctx, '/r/x?as=creator'),
    confirmEnd: confirmEndPage(ctx, 'token', '/r/x?as=creator'),
    wallet: walletPage(ctx),
    receiptNotFound: receiptNotFoundPage(ctx),
    createdWithWebhook: createdPage(ctx, CREATED, '<svg></svg>'),
    createdInBrowser: createdPage(ctx, CREATED, '', true),
    create: createPage(ctx, 'token'),
    receiptHeld: receiptPage(ctx, HELD, 'token', '/api/receipt/x.php', undefined, 'checkin-token', '/r/x/checkin'),
    receiptReleased: receiptPage(ctx, RELEASED, null, '/api/receipt/x.php'),
    receiptEndedHeld: receiptPage(ctx, { ...HELD, status: 'ended', ended_at: '2026-03-01 10:00:00', end_reason: 'creator', purge_after: '2026-03-31 10:00:00' }, null, '/api/receipt/x.php'),
    createdWithControls: createdPage(ctx, { ...CREATED, controls: { releaseAfterSilenceHours: 48, shrinkAfterFirstViewMinutes: 10, releaseState: 'held' } }, '<svg></svg>'),
    createdScheduled: createdPage(ctx, { ...CREATED, controls: { availableFrom: new Date('2026-03-05T10:00:00Z'), releaseState: 'scheduled' } }, '', true),
    notYetScheduled: notYetPage(ctx, new Date('2026-03-05T10:00:00Z')),
    notYetHeld: notYetPage(ctx, null),
  };
}

/** English sentences and labels (placeholders cut out), as they would show if a template still said them itself. */
function englishFragments(): string[] {
  const english = readCatalogue('en');
  const others = LOCALES.filter((locale) => locale !== 'en').map((locale) => readCatalogue(locale));
  return Object.entries(english)
    .filter(([key]) => key !== 'language.name' && others.every((catalogue) => catalogue[key] !== english[key]))
    .flatMap(([, message]) => message.split(/\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}/))
    .map((fragment) => fragment.trim())
    .filter((fragment) => fragment.length >= 12);
}

describe('receipt and created pages in every language (issue 20)', () => {
  const fragments = englishFragments();

  it('when the English catalogue is cut into fragments, then there are enough of them to catch a template that still speaks English', () => {
    expect(fragments).toEqual(expect.arrayContaining(['Receipt of your note', 'Waiting to be read', 'Copy receipt link', 'Signing secret (shown once)']));
  });

  it.each(LOCALES.filter((locale) => locale !== 'en'))('when the pages are shown in %s, then no English sentence, raw key or placeholder is left', (locale) => {
    for (const [name, page] of Object.entries(pages(locale))) {
      const text = page.replace(/<[^>]+>/g, ' ');
      expect({ name, english: fragments.filter((fragment) => text.includes(fragment)) }).toEqual({ name, english: [] });
      expect({ name, leftovers: text.match(/\{[a-z_]+\}|\b(?:receipt|created|create|wallet)\.[a-zA-Z.]+/g) }).toEqual({ name, leftovers: null });
      expect(page).toContain(`<html lang="${locale}" dir="${locale === 'ar' ? 'rtl' : 'ltr'}" data-theme="dark">`);
    }
  });

  it('when a receipt is shown in German, then its moments are said through Intl in UTC and stay machine-readable', () => {
    const page = receiptPage(context('de'), ENDED, null, '/api/receipt/x.php');
    expect(page).toContain('<time datetime="2026-03-01T09:00:00.000Z">1. März 2026 um 09:00 UTC</time>');
    expect(page).toContain('<time datetime="2026-03-01T10:00:05.000Z">01.03.2026, 10:00:05 UTC</time>');
    expect(page).toContain('<dd id="views-used">1 von 2</dd>');
    expect(page).toContain('nach fünf falschen Kennwörtern vernichtet');
  });

  it('when a receipt is shown in English, then it says what it always said', () => {
    const page = receiptPage(context('en'), ENDED, null, '/api/receipt/x.php');
    expect(page).toContain('<dd id="views-used">1 of 2</dd>');
    expect(page).toContain('<dd id="end-reason">destroyed after five wrong passcodes</dd>');
    expect(page).toContain('Note page fetched without opening the note (link preview bot); no view used');
    expect(page).toContain('Note destroyed after five wrong passcodes');
    expect(page).toContain('after 2 views or at March 2, 2026 at 9:00 AM UTC, whichever comes first');
  });
});

describe('DECISIONS 16 on the receipt page', () => {
  it('when a dead-man\'s switch is held, then the page says "held", when it opens, and offers "I am still here" as a form to its own check-in path', () => {
    const page = receiptPage(context('en'), HELD, 'token', '/api/receipt/x.php', undefined, 'checkin-token', '/r/x/checkin');
    expect(page).toContain('<dd id="release-state" data-state="held"><strong>Held</strong>: opens on March 3, 2026 at 9:00 AM UTC unless you check in before then</dd>');
    expect(page).toMatch(/<form method="post" action="\/r\/x\/checkin">\s*<input type="hidden" name="form_token" value="checkin-token">\s*<button type="submit" id="checkin-button">I am still here<\/button>/);
    expect(page).toContain('Each check-in keeps the note closed for 48 more hours from now.');
    expect(page).toContain('<dd id="shrink">After the first view it ends within 10 minutes.</dd>');
    expect(page).toContain('not encryption that time unlocks');
  });

  it('when a note was scheduled and has opened, then the page says "released" and offers no check-in', () => {
    const page = receiptPage(context('en'), RELEASED, null, '/api/receipt/x.php');
    expect(page).toContain('data-state="released"><strong>Released</strong>: open since');
    expect(page).not.toContain('checkin');
    expect(page).toContain('Note released: it can be opened');
  });

  it('when a held note was ended before it opened, then the page says it never opened and offers no check-in', () => {
    const page = receiptPage(context('en'), { ...HELD, status: 'ended', ended_at: '2026-03-01 10:00:00', end_reason: 'creator', purge_after: '2026-03-31 10:00:00' }, null, '/api/receipt/x.php', undefined, 'checkin-token', '/r/x/checkin');
    expect(page).toContain('<dd id="release-state" data-state="never">it ended before it ever opened</dd>');
    expect(page).not.toContain('checkin-button');
  });

  it('when a note has no time controls, then the receipt page shows no such section', () => {
    expect(receiptPage(context('en'), ACTIVE, 'token', '/api/receipt/x.php')).not.toContain('time-controls');
  });
});

/** Issue 32: the receipt of every way a note ends, each sentence true for that note. */
describe('the receipt of an ended note says what happened, whatever ended it', () => {
  const ended = (overrides: Partial<ReceiptBody>): ReceiptBody => ({
    ...ENDED, has_passcode: false, timeline: [{ at: '2026-03-01 09:00:00', event: 'created' }, { at: '2026-03-01 10:00:05', event: 'end', reason: overrides.end_reason ?? 'views' }], ...overrides,
  });
  const facts = (receipt: ReceiptBody, locale: Locale = 'en') => {
    const page = receiptPage(context(locale), receipt, null, '/api/receipt/x.php');
    const dd = (id: string) => new RegExp(`<dd id="${id}">([^<]*)</dd>`).exec(page)?.[1];
    return { rule: dd('end-rule'), used: dd('views-used'), left: dd('views-left') ?? null, reason: dd('end-reason'), page };
  };

  it.each([
    ['views', { expiry_type: 'view', max_views: 2, views_used: 2, end_reason: 'views' },
      'after 2 views; deleted on March 2, 2026 at 9:00 AM UTC if they are not all used', '2 of 2', 'destroyed after its last allowed view'],
    ['time', { expiry_type: 'time', max_views: 100, views_used: 3, end_reason: 'time' },
      'at March 2, 2026 at 9:00 AM UTC', '3', 'expired at its time limit'],
    ['time, both', { expiry_type: 'both', max_views: 5, views_used: 1, end_reason: 'time' },
      'after 5 views or at March 2, 2026 at 9:00 AM UTC, whichever comes first', '1 of 5', 'expired at its time limit'],
    ['lockout', { expiry_type: 'view', max_views: 1, views_used: 0, has_passcode: true, end_reason: 'lockout' },
      'after 1 view; deleted on March 2, 2026 at 9:00 AM UTC if they are not all used', '0 of 1', 'destroyed after five wrong passcodes'],
    ['creator', { expiry_type: 'view', max_views: 3, views_used: 1, end_reason: 'creator' },
      'after 3 views; deleted on March 2, 2026 at 9:00 AM UTC if they are not all used', '1 of 3', 'ended by you from this receipt'],
    ['takedown', { expiry_type: 'both', max_views: 1, views_used: 0, end_reason: 'takedown' },
      'after 1 view or at March 2, 2026 at 9:00 AM UTC, whichever comes first', '0 of 1', 'taken down by the operator'],
    ['retention, unread', { expiry_type: 'view', max_views: 2, views_used: 0, end_reason: 'retention' },
      'after 2 views; deleted on March 2, 2026 at 9:00 AM UTC if they are not all used', '0 of 2', 'deleted unread after the retention period'],
    ['retention, read once', { expiry_type: 'view', max_views: 2, views_used: 1, end_reason: 'retention' },
      'after 2 views; deleted on March 2, 2026 at 9:00 AM UTC if they are not all used', '1 of 2', 'deleted after the retention period, with views still unused'],
  ] as const)('when it ended by %s, then the rule, the views and the reason agree', (_name, overrides, rule, used, reason) => {
    const shown = facts(ended(overrides as Partial<ReceiptBody>));
    expect({ rule: shown.rule, used: shown.used, left: shown.left, reason: shown.reason }).toEqual({ rule, used, left: null, reason });
    expect(shown.page).toContain('<dt>Was set to end</dt>');
    expect(shown.page).toContain(`Note ${reason}`);
    // The old wording: an unread deletion beside views that were used, "Destroyed" for a rule.
    expect(shown.page).not.toMatch(/\(unread|<dt>Destroyed<\/dt>/);
  });

  it('when the note is still waiting, then the rule is in the future and the views left are shown', () => {
    const shown = facts(ACTIVE);
    expect(shown.page).toContain('<dt>Ends</dt>');
    expect(shown.left).toBe('1');
    expect(shown.reason).toBeUndefined();
  });

  it.each(LOCALES.filter((locale) => locale !== 'en'))('when a note read once is deleted at its retention deadline in %s, then the page does not call it unread', (locale) => {
    const receipt = ended({ expiry_type: 'view', max_views: 2, views_used: 1, end_reason: 'retention' });
    const shown = facts(receipt, locale);
    const t = translations.get(locale);
    expect(shown.reason).toBe(t.t('receipt.reason.retentionPartlyRead'));
    expect(shown.page).not.toContain(t.t('receipt.reason.retention'));
    expect(shown.page).toContain(`<dt>${t.t('receipt.wasToEnd')}</dt>`);
  });
});

/** DECISIONS 16: the wrong-link guard, the confirmation before an end, and the creator mark. */
describe('the wrong-link guard and the confirmation', () => {
  it('when the guard is shown, then it says whose link this is and has no form at all (nothing on it can end the note)', () => {
    const page = receiptGuardPage(context('en'), '/r/x?as=creator');
    expect(page).toContain('This is a receipt link, not a note');
    expect(page).toContain('If someone sent you this link');
    expect(page).not.toMatch(/<form method="post"|form_token|End this note/);
    expect(page).toContain('<a href="/r/x?as=creator" id="show-receipt">I created this note: show its receipt</a>');
  });

  it('when the receipt of a waiting note is shown, then "End this note now" is a link to the confirmation, not a form that ends', () => {
    const page = receiptPage(context('en'), ACTIVE, '/r/x?end=confirm', '/api/receipt/x.php');
    expect(page).not.toMatch(/<form method="post"|form_token/);
    expect(page).toContain('<a class="button danger" id="end-note" href="/r/x?end=confirm">End this note now</a>');
  });

  it('when the confirmation is shown, then its one form posts the token to the receipt and "No" leads back', () => {
    const page = confirmEndPage(context('en'), 'tok', '/r/x?as=creator');
    expect(page).toContain('<form method="post" action="/r/x">');
    expect(page).toContain('<input type="hidden" name="form_token" value="tok">');
    expect(page).toContain('<a href="/r/x?as=creator">No, keep it</a>');
  });

  it('when the created page sets the mark, then it is scoped to that receipt\'s path, HttpOnly, Lax, and lives as long as the receipt can (at most 400 days)', () => {
    const now = new Date('2026-03-01T00:00:00Z');
    const mark = creatorMark('https://notes.example/r/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', new Date('2026-03-02T00:00:00Z'), 720, now);
    expect(mark).toEqual({
      name: CREATOR_MARK_COOKIE, value: '1',
      options: { path: '/r/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', maxAge: (24 + 720) * 3_600_000, sameSite: 'lax', httpOnly: true, secure: true },
    });
    expect(creatorMark('http://127.0.0.1:8080/r/x', new Date('2030-01-01T00:00:00Z'), 720, now).options).toMatchObject({ maxAge: 400 * 24 * 3_600_000, secure: false });
    expect(hasCreatorMark('lang=de; vanish_creator=1; theme=dark')).toBe(true);
    expect(hasCreatorMark('vanish_creator=0')).toBe(false);
    expect(hasCreatorMark('xvanish_creator=1')).toBe(false);
    expect(hasCreatorMark(undefined)).toBe(false);
  });
});

describe('the receipt of a note that ends at a time only', () => {
  it('when it is shown, then it says how many views there were, not a view limit the user never chose (the internal cap of 100)', () => {
    const timeOnly: ReceiptBody = { ...ACTIVE, expiry_type: 'time', max_views: 100, views_used: 0, views_left: 100 };
    const page = receiptPage(context('en'), timeOnly, 'token', '/api/receipt/x.php');
    expect(/<dd id="views-used">([^<]*)<\/dd>/.exec(page)?.[1]).toBe('0');
    expect(page).not.toContain('id="views-left"');
    expect(page).not.toMatch(/\b100\b/);
    const limited = receiptPage(context('en'), ACTIVE, 'token', '/api/receipt/x.php');
    expect(/<dd id="views-used">([^<]*)<\/dd>/.exec(limited)?.[1]).toMatch(/1\D+2/);
    expect(limited).toContain('id="views-left"');
  });
});

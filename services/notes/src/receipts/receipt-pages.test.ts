import { LOCALES, Translations, readCatalogue, type Locale } from '../http/pages/i18n';
import { createPage, createdPage, type PageContext } from '../http/pages/templates';
import { receiptNotFoundPage, receiptPage } from './receipt-pages';
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

/** The pages a reader of another language must see without a word of English left in them. */
function pages(locale: Locale): Record<string, string> {
  const ctx = context(locale);
  return {
    receiptEnded: receiptPage(ctx, ENDED, null, '/api/receipt/x.php'),
    receiptActive: receiptPage(ctx, ACTIVE, 'token', '/api/receipt/x.php'),
    receiptNotFound: receiptNotFoundPage(ctx),
    createdWithWebhook: createdPage(ctx, CREATED, '<svg></svg>'),
    createdInBrowser: createdPage(ctx, CREATED, '', true),
    create: createPage(ctx, 'token'),
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
      expect({ name, leftovers: text.match(/\{[a-z_]+\}|\b(?:receipt|created|create)\.[a-zA-Z.]+/g) }).toEqual({ name, leftovers: null });
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

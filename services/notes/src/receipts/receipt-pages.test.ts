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

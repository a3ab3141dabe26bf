import { LOCALES, Translations } from '../http/pages/i18n';
import { embedSnippet } from './embed-snippet';
import { REQUEST_ASSET_INTEGRITY } from './request-assets';
import {
  embeddedSendPage, inboxMessagePage, inboxPage, makeRequestPage, openedSubmissionPage, requestClosedPage, requestNotFoundPage, sendPage,
} from './request-pages';
import { embedCsp } from './request-routes';
import type { InboxView, RequestForSender } from './request-service';

const translations = new Translations();
const ID = 'A'.repeat(43);
const request: RequestForSender = {
  label: '<b>your API key</b>', publicKey: 'B'.repeat(43), allowFiles: false, expiresAt: new Date('2026-12-01T00:00:00Z'), status: 'open', allowedOrigins: [],
};
const inbox: InboxView = {
  requestUrl: `https://v.example/q/${ID}`, requestRef: 'f'.repeat(32), label: 'the label', publicKey: 'B'.repeat(43), status: 'open', maxSubmissions: 3,
  createdAt: new Date('2026-11-27T00:00:00Z'), expiresAt: new Date('2026-12-04T00:00:00Z'), allowFiles: false, allowedOrigins: ['https://shop.example'],
  submissions: [
    { number: 1, submittedAt: new Date('2026-11-27T10:00:00Z'), size: 120, state: 'waiting', ephemeralKey: 'C'.repeat(43), expiresAt: new Date('2026-12-27T00:00:00Z') },
    { number: 2, submittedAt: new Date('2026-11-27T11:00:00Z'), size: 1, state: 'expired', ephemeralKey: 'D'.repeat(43), expiresAt: new Date('2026-12-27T00:00:00Z') },
  ],
};

describe('the requests\' pages (DECISIONS 15)', () => {
  it.each([...LOCALES])('when every requests page is rendered in %s, then each renders, in the language\'s direction, the label as text', (locale) => {
    const ctx = { t: translations.get(locale), theme: 'system' as const, languages: translations.names(), switcher: true };
    const pages = [
      makeRequestPage(ctx, 'https://v.example'), sendPage(ctx, ID, request), embeddedSendPage(ctx, ID, request), inboxPage(ctx, ID, inbox, 'https://v.example'),
      openedSubmissionPage(ctx, ID, { number: 1, envelope: 'vz1.x.y', ephemeralKey: 'C'.repeat(43), currentViews: 1, maxViews: 1, destroyed: true }),
      inboxMessagePage(ctx, ID, 'x'), requestClosedPage(ctx), requestNotFoundPage(ctx, true),
    ];
    for (const page of pages) {
      expect(page).toContain(`dir="${locale === 'ar' ? 'rtl' : 'ltr'}"`);
      expect(page).not.toContain('<b>your API key</b>');
    }
    expect(pages[1]).toContain('&lt;b&gt;your API key&lt;/b&gt;');
    expect(pages[2]).toContain('data-embedded');
    expect(pages[2]).not.toContain('<header>');
    expect(pages[3]).toContain('data-ephemeral-key="CCCC');
    expect(pages[3]).not.toContain('data-ephemeral-key="DDDD'); // an expired one offers no opening
  });

  it('when a request allows files, then the sender\'s and the embedded form carry the create page\'s file field and load tus; an opened answer lists its download addresses', () => {
    const ctx = { t: translations.get('en'), theme: 'system' as const, languages: translations.names(), switcher: true };
    for (const page of [sendPage(ctx, ID, request), embeddedSendPage(ctx, ID, request)]) {
      expect(page).not.toContain('id="files-input"');
      expect(page).not.toContain('/assets/tus.js');
    }
    for (const page of [sendPage(ctx, ID, { ...request, allowFiles: true }), embeddedSendPage(ctx, ID, { ...request, allowFiles: true })]) {
      expect(page).toContain('id="files-input"');
      expect(page).toContain('id="upload-progress"');
      expect(page).toContain('/assets/tus.js');
    }
    const opened = openedSubmissionPage(ctx, ID, {
      number: 1, envelope: 'vz1.x.y', ephemeralKey: 'C'.repeat(43), currentViews: 1, maxViews: 1, destroyed: true, files: [{ url: 'https://v.example/files/d/TOKEN', size: 32 }],
    });
    expect(opened).toContain('<li data-download="https://v.example/files/d/TOKEN" data-size="32">');
    expect(opened).toContain('id="files-section"');
    expect(makeRequestPage(ctx, 'https://v.example')).toContain('name="allow_files" type="checkbox"');
  });

  it('when the embed snippet is made, then it names the request link and the embed script with its integrity hash', () => {
    expect(embedSnippet('https://v.example/', `https://v.example/q/${ID}`)).toBe(
      `<div data-vanish-request="https://v.example/q/${ID}"></div>\n<script src="https://v.example/assets/embed.js" integrity="${REQUEST_ASSET_INTEGRITY.embed}" crossorigin="anonymous" async></script>`,
    );
  });

  it('when the embedded form\'s CSP is made, then frame-ancestors names the allowed origins, or none', () => {
    expect(embedCsp([])).toContain("frame-ancestors 'none'");
    expect(embedCsp(['https://a.example', 'http://127.0.0.1:3000'])).toMatch(/frame-ancestors https:\/\/a\.example http:\/\/127\.0\.0\.1:3000$/);
    expect(embedCsp(['https://a.example'])).not.toContain("frame-ancestors 'none'");
  });
});

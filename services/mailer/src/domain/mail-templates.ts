import type { MailCommand } from '@vanish/common';
import { type MailTranslator, mailTranslator } from './mail-i18n';
import { parseUtc } from './mail-command';

export const PRODUCT_NAME = 'vanish';

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/**
 * Fixed templates, in the language of the page that created the note (the command's `lang`, issue 20;
 * absent: English). The only variables are the link (link e-mails), times and counts: no text a
 * note's creator chose ever appears, so the feature cannot relay spam or harassment. A
 * notification never holds the content, the passcode or the link.
 */
export function renderEmail(command: MailCommand, unsubscribeUrl: string): RenderedEmail {
  const t = mailTranslator(command.lang);
  if (command.kind === 'link') return renderLink(t, command, unsubscribeUrl);
  if (command.kind === 'request') return renderRequestSubmission(t, command, unsubscribeUrl);
  return renderNotification(t, command, unsubscribeUrl);
}

type LinkCommand = Extract<MailCommand, { kind: 'link' }>;
type NotificationCommand = Extract<MailCommand, { kind: 'notification' }>;
type RequestSubmissionCommand = Extract<MailCommand, { kind: 'request' }>;
const product = PRODUCT_NAME;

function renderLink(t: MailTranslator, command: LinkCommand, unsubscribeUrl: string): RenderedEmail {
  const subject = t.t('link.subject', { product });
  const intro = t.t('link.intro', { product, created: when(t, command.created_at) });
  const after = [
    // DECISIONS 13: the server never had this note's key, so the link cannot carry it.
    ...(command.key_separately ? [t.t('link.keySeparately')] : []),
    t.t('link.selfDestructs', { rule: destructionRule(t, command) }),
    t.t('link.pageFirst'),
    t.t('link.anonymous', { product }),
  ];
  const text = [
    t.t('mail.hello'), '', intro, '', command.link, '', ...after.flatMap((line) => [line, '']),
    t.t('mail.unsubscribeText', { product, url: unsubscribeUrl }), '',
  ].join('\n');
  const html = page(t, subject, [
    `<p>${escapeHtml(t.t('mail.hello'))}</p>`,
    `<p>${escapeHtml(intro)}</p>`,
    `<p dir="ltr"><a href="${escapeHtml(command.link)}">${escapeHtml(command.link)}</a></p>`,
    ...after.map((line) => `<p>${escapeHtml(line)}</p>`),
  ], unsubscribeUrl);
  return { subject, text, html };
}

function destructionRule(t: MailTranslator, command: LinkCommand): string {
  const at = when(t, command.expires_at);
  return t.t(`link.rule.${command.expiry_type}`, { views: command.max_views, at });
}

function renderNotification(t: MailTranslator, command: NotificationCommand, unsubscribeUrl: string): RenderedEmail {
  const subject = t.t('notification.subject', { product });
  const lines = [
    t.t('notification.read', { product, read: when(t, command.read_at) }),
    command.views_left > 0 ? t.t('notification.left', { left: command.views_left }) : t.t('notification.gone'),
    t.t('notification.safety'),
  ];
  // The creator's receipt (DECISIONS 12): who fetched the link, each read, and an end-now button.
  const receipt = command.receipt_url;
  const text = [
    t.t('mail.hello'), '', ...lines.flatMap((line) => [line, '']),
    ...(receipt ? [t.t('notification.receipt'), receipt, ''] : []),
    t.t('mail.unsubscribeText', { product, url: unsubscribeUrl }), '',
  ].join('\n');
  const html = page(t, subject, [
    `<p>${escapeHtml(t.t('mail.hello'))}</p>`, ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    ...(receipt ? [`<p>${escapeHtml(t.t('notification.receipt'))}</p>`, `<p><a href="${escapeHtml(receipt)}">${escapeHtml(receipt)}</a></p>`] : []),
  ], unsubscribeUrl);
  return { subject, text, html };
}

/** DECISIONS 15: an answer arrived in a request's inbox. No link and no label: the requester knows both. */
function renderRequestSubmission(t: MailTranslator, command: RequestSubmissionCommand, unsubscribeUrl: string): RenderedEmail {
  const subject = t.t('request.subject', { product });
  const lines = [
    t.t('request.arrived', { product, at: when(t, command.submitted_at), number: command.number, max: command.max_submissions }),
    t.t('request.open'),
    t.t('request.safety'),
  ];
  const text = [t.t('mail.hello'), '', ...lines.flatMap((line) => [line, '']), t.t('mail.unsubscribeText', { product, url: unsubscribeUrl }), ''].join('\n');
  const html = page(t, subject, [`<p>${escapeHtml(t.t('mail.hello'))}</p>`, ...lines.map((line) => `<p>${escapeHtml(line)}</p>`)], unsubscribeUrl);
  return { subject, text, html };
}

function page(t: MailTranslator, title: string, body: string[], unsubscribeUrl: string): string {
  return [
    '<!DOCTYPE html>',
    `<html lang="${t.locale}" dir="${t.dir}"><head><meta charset="utf-8">`,
    `<title>${escapeHtml(title)}</title></head>`,
    '<body style="font-family:Arial,Helvetica,sans-serif;color:#222;max-width:600px;margin:0 auto;padding:16px">',
    `<h1 style="font-size:20px">${PRODUCT_NAME}</h1>`,
    ...body,
    '<hr style="border:none;border-top:1px solid #ddd">',
    `<p style="font-size:12px;color:#595959">${escapeHtml(t.t('mail.unsubscribeLead', { product }))} ` +
      `<a href="${escapeHtml(unsubscribeUrl)}">${escapeHtml(t.t('mail.unsubscribe'))}</a>.</p>`,
    '</body></html>',
    '',
  ].join('\n');
}

function when(t: MailTranslator, value: string): string {
  const date = parseUtc(value);
  return date ? t.dateUtc(date) : t.t('mail.unknownTime');
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

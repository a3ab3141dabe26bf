import type { MailCommand } from '@vanish/common';
import { parseUtc } from './mail-command';

export const PRODUCT_NAME = 'vanish';
export const KEY_SEPARATELY = 'This link is missing its key on purpose: the note was encrypted on the sender\'s own device, and we never had the key. The sender will give it to you another way; add it to the end of the link after a # sign, exactly as given. Without the key the note cannot be opened, and trying uses up nothing.';

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

/**
 * Fixed templates. The only variables are the link (link e-mails), times and counts: no text a
 * note's creator chose ever appears, so the feature cannot relay spam or harassment. A
 * notification never holds the content, the passcode or the link.
 */
export function renderEmail(command: MailCommand, unsubscribeUrl: string): RenderedEmail {
  return command.kind === 'link' ? renderLink(command, unsubscribeUrl) : renderNotification(command, unsubscribeUrl);
}

type LinkCommand = Extract<MailCommand, { kind: 'link' }>;
type NotificationCommand = Extract<MailCommand, { kind: 'notification' }>;

function renderLink(command: LinkCommand, unsubscribeUrl: string): RenderedEmail {
  const subject = `A note was shared with you on ${PRODUCT_NAME}`;
  const created = utc(command.created_at);
  const rule = destructionRule(command);
  const intro = `Someone used ${PRODUCT_NAME} to share an encrypted note with you on ${created}. Open it with this link:`;
  const after = [
    // DECISIONS 13: the server never had this note's key, so the link cannot carry it.
    ...(command.key_separately ? [KEY_SEPARATELY] : []),
    `This note self-destructs: ${rule}. Once destroyed it cannot be recovered.`,
    'Opening the link shows a page first; the note is revealed, and a view counted, only when you choose to reveal it.',
    `${PRODUCT_NAME} does not say in e-mails who created a note or what it holds. If you did not expect this e-mail, you can ignore it.`,
  ];
  const text = [
    'Hello,', '', intro, '', command.link, '', ...after.flatMap((line) => [line, '']),
    `To receive no more e-mails from ${PRODUCT_NAME} at this address: ${unsubscribeUrl}`, '',
  ].join('\n');
  const html = page(subject, [
    `<p>Hello,</p>`,
    `<p>${escapeHtml(intro)}</p>`,
    `<p><a href="${escapeHtml(command.link)}">${escapeHtml(command.link)}</a></p>`,
    ...after.map((line) => `<p>${escapeHtml(line)}</p>`),
  ], unsubscribeUrl);
  return { subject, text, html };
}

function destructionRule(command: LinkCommand): string {
  const views = `${command.max_views} ${command.max_views === 1 ? 'view' : 'views'}`;
  const at = utc(command.expires_at);
  switch (command.expiry_type) {
    case 'view':
      return `it is destroyed after ${views}, and deleted unread on ${at}`;
    case 'time':
      return `it is destroyed on ${at}`;
    case 'both':
      return `it is destroyed after ${views} or on ${at}, whichever comes first`;
  }
}

function renderNotification(command: NotificationCommand, unsubscribeUrl: string): RenderedEmail {
  const subject = `Your ${PRODUCT_NAME} note was read`;
  const lines = [
    `A note you created on ${PRODUCT_NAME} was read on ${utc(command.read_at)}.`,
    command.views_left > 0
      ? `It can be read ${command.views_left} more ${command.views_left === 1 ? 'time' : 'times'} before it self-destructs.`
      : 'It has now self-destructed and cannot be read again.',
    `For your safety this e-mail never holds the note, its passcode or its link.`,
  ];
  // The creator's receipt (DECISIONS 12): who fetched the link, each read, and an end-now button.
  const receiptIntro = 'Your receipt shows each time the note was opened or previewed, and lets you end it now:';
  const receipt = command.receipt_url;
  const text = [
    'Hello,', '', ...lines.flatMap((line) => [line, '']),
    ...(receipt ? [receiptIntro, receipt, ''] : []),
    `To receive no more e-mails from ${PRODUCT_NAME} at this address: ${unsubscribeUrl}`, '',
  ].join('\n');
  const html = page(subject, [
    '<p>Hello,</p>', ...lines.map((line) => `<p>${escapeHtml(line)}</p>`),
    ...(receipt ? [`<p>${escapeHtml(receiptIntro)}</p>`, `<p><a href="${escapeHtml(receipt)}">${escapeHtml(receipt)}</a></p>`] : []),
  ], unsubscribeUrl);
  return { subject, text, html };
}

function page(title: string, body: string[], unsubscribeUrl: string): string {
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title></head>`,
    '<body style="font-family:Arial,Helvetica,sans-serif;color:#222;max-width:600px;margin:0 auto;padding:16px">',
    `<h1 style="font-size:20px">${PRODUCT_NAME}</h1>`,
    ...body,
    '<hr style="border:none;border-top:1px solid #ddd">',
    `<p style="font-size:12px;color:#666">To receive no more e-mails from ${PRODUCT_NAME} at this address, ` +
      `<a href="${escapeHtml(unsubscribeUrl)}">unsubscribe</a>.</p>`,
    '</body></html>',
    '',
  ].join('\n');
}

/** `2026-01-01 12:00:00 UTC`, whatever form the command used. */
export function utc(value: string): string {
  const date = parseUtc(value);
  return date ? `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC` : 'an unknown time';
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

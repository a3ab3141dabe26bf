import type { MailCommand, MailCommandEnvelope } from '@vanish/common';
import { LANG_TAG } from './mail-i18n';

export type MailKind = MailCommand['kind'];

/** A command that can never be sent (malformed, unknown key, tampered): dead-lettered at once. */
export class InvalidMailCommand extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidMailCommand';
  }
}

/** One plain address, no display name, nothing that could inject a header (DECISIONS 4). */
const ADDRESS = /^[^\s@<>"(),;:\\[\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;
const EXPIRY_TYPES = ['view', 'time', 'both'] as const;

export function parseEnvelope(body: string): MailCommandEnvelope {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidMailCommand('envelope is not JSON');
  }
  const v = value as Partial<MailCommandEnvelope> | null;
  if (!v || typeof v !== 'object' || v.event !== 'mail.send' || v.version !== 1 ||
      typeof v.id !== 'string' || !/^[A-Za-z0-9._:-]{1,100}$/.test(v.id) || typeof v.sealed !== 'string') {
    throw new InvalidMailCommand('not a mail.send v1 envelope');
  }
  return v as MailCommandEnvelope;
}

/** Validates the opened command: only these fields, of these shapes, reach a template. */
export function parseMailCommand(json: string): MailCommand {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new InvalidMailCommand('sealed command is not JSON');
  }
  const v = value as Record<string, unknown> | null;
  if (!v || typeof v !== 'object') throw new InvalidMailCommand('sealed command is not an object');
  const to = v.to;
  if (typeof to !== 'string' || to.length > 254 || !ADDRESS.test(to)) throw new InvalidMailCommand('recipient is not one plain address');
  // Issue 20: the language of the page that made the note; absent means English, and a well-formed tag the
  // mailer has no catalogue for is written in its nearest language or English (mailLocaleFor).
  if (v.lang !== undefined && (typeof v.lang !== 'string' || v.lang.length > 35 || !LANG_TAG.test(v.lang))) {
    throw new InvalidMailCommand('lang is not a language tag');
  }
  const lang = typeof v.lang === 'string' ? { lang: v.lang } : {};
  if (v.kind === 'link') {
    const link = v.link;
    if (typeof link !== 'string' || link.length > 2048 || !isHttpUrl(link)) throw new InvalidMailCommand('link is not an http(s) URL');
    if (!(EXPIRY_TYPES as readonly unknown[]).includes(v.expiry_type)) throw new InvalidMailCommand('unknown expiry_type');
    if (!Number.isInteger(v.max_views) || (v.max_views as number) < 1) throw new InvalidMailCommand('max_views is not a positive integer');
    if (v.key_separately !== undefined && v.key_separately !== true) throw new InvalidMailCommand('key_separately is not true');
    return {
      ...(v.key_separately === true ? { key_separately: true as const } : {}),
      kind: 'link', to, link,
      expiry_type: v.expiry_type as (typeof EXPIRY_TYPES)[number],
      expires_at: timestamp(v.expires_at, 'expires_at'),
      max_views: v.max_views as number,
      created_at: timestamp(v.created_at, 'created_at'),
      ...lang,
    };
  }
  if (v.kind === 'notification') {
    if (!Number.isInteger(v.views_left) || (v.views_left as number) < 0) throw new InvalidMailCommand('views_left is not a non-negative integer');
    const receiptUrl = v.receipt_url;
    if (receiptUrl !== undefined && (typeof receiptUrl !== 'string' || receiptUrl.length > 2048 || !isHttpUrl(receiptUrl))) throw new InvalidMailCommand('receipt_url is not an http(s) URL');
    return {
      kind: 'notification', to, read_at: timestamp(v.read_at, 'read_at'), views_left: v.views_left as number,
      ...(receiptUrl !== undefined ? { receipt_url: receiptUrl as string } : {}),
      ...lang,
    };
  }
  if (v.kind === 'request') {
    // DECISIONS 15: a submission arrived; no link (the inbox link holds a key the server never had), no label.
    for (const name of ['number', 'max_submissions'] as const) {
      if (!Number.isInteger(v[name]) || (v[name] as number) < 1 || (v[name] as number) > 1000) throw new InvalidMailCommand(`${name} is not an integer from 1 to 1000`);
    }
    return {
      kind: 'request', to, submitted_at: timestamp(v.submitted_at, 'submitted_at'),
      number: v.number as number, max_submissions: v.max_submissions as number,
      ...lang,
    };
  }
  throw new InvalidMailCommand('unknown mail kind');
}

function isHttpUrl(text: string): boolean {
  if (/[\s<>"'\\]/.test(text)) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** Accepts SPEC's `YYYY-MM-DD HH:MM:SS` (UTC) or ISO 8601; kept as given, checked parseable. */
function timestamp(value: unknown, field: string): string {
  if (typeof value !== 'string' || parseUtc(value) === undefined) throw new InvalidMailCommand(`${field} is not a timestamp`);
  return value;
}

export function parseUtc(value: string): Date | undefined {
  const spec = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(value);
  const date = spec ? new Date(`${spec[1]}-${spec[2]}-${spec[3]}T${spec[4]}:${spec[5]}:${spec[6]}Z`) :
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value) ? new Date(value) : undefined;
  return date && !Number.isNaN(date.getTime()) ? date : undefined;
}

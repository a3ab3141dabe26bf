import { ValidationError, parseWebhookUrl, type ExpiryType } from '@vanish/common';
import { ENVELOPE_MAX_LENGTH, isKeyCheck, parseEnvelope } from '@vanish/envelope';
import type { CreateNoteInput } from './notes';

/**
 * The create request (SPEC 4.1, 8; DECISIONS 4) turned from an unknown JSON value into a
 * CreateNoteInput, or a ValidationError with the DECISIONS 4 code and the offending parameter.
 * Fields are checked in SPEC order and the first problem is reported. Unknown fields are ignored
 * and only own properties are read, so `__proto__`/`constructor` keys in a body are inert.
 */
export const CONTENT_MAX_CODE_POINTS = 10_000;
export const EXPIRY_HOURS_MIN = 1;
export const EXPIRY_HOURS_MAX = 8760;
export const EXPIRY_HOURS_DEFAULT = 24;
export const MAX_VIEWS_MIN = 1;
export const MAX_VIEWS_MAX = 100;
export const MAX_VIEWS_DEFAULT = 1;
export const PASSCODE_MAX_CODE_POINTS = 128;
export const EMAIL_MAX_LENGTH = 254;
export const EXPIRY_TYPES: readonly ExpiryType[] = ['view', 'time', 'both'];
/** DECISIONS 16: a year of minutes; the shrink can only shorten the note's expiry anyway. */
export const SHRINK_MINUTES_MIN = 1;
export const SHRINK_MINUTES_MAX = 525_600;
export const SILENCE_HOURS_MIN = 1;
export const SILENCE_HOURS_MAX = 8760;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Counts Unicode code points (an emoji is one, whatever its UTF-16 length). */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

// One plain address: dot-atom local part (RFC 5322 atext, which has no space, quote, comma,
// angle bracket, CR, LF or NUL, so no display name and no header injection), a dotted host name
// of LDH labels, and an alphabetic (or punycode) top-level label. ASCII only.
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const TLD = '(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})';
const EMAIL = new RegExp(`^${ATEXT}(?:\\.${ATEXT})*@(?:${LABEL}\\.)+${TLD}$`);

export function isPlainEmail(value: string): boolean {
  if (value.length > EMAIL_MAX_LENGTH) return false;
  const at = value.lastIndexOf('@');
  if (at < 1 || at > 64) return false; // local part at most 64 octets (RFC 5321)
  return EMAIL.test(value);
}

type Body = Record<string, unknown>;

function field(body: Body, name: string): unknown {
  return Object.prototype.hasOwnProperty.call(body, name) ? body[name] : undefined;
}

function fail(code: string, parameter: string | null, message: string): never {
  throw new ValidationError(code, message, { parameter });
}

function content(body: Body): string {
  const value = field(body, 'content');
  if (typeof value !== 'string' || value.trim() === '') {
    fail('INVALID_CONTENT', 'content', 'content is required and must be a non-empty string');
  }
  if (hasLoneSurrogate(value)) {
    fail('INVALID_CONTENT', 'content', 'content must be valid Unicode text (it contains a lone surrogate)');
  }
  if (codePointLength(value) > CONTENT_MAX_CODE_POINTS) {
    fail('CONTENT_TOO_LONG', 'content', `content must be at most ${CONTENT_MAX_CODE_POINTS} characters`);
  }
  return value;
}

/**
 * DECISIONS 13: `client_encrypted: true` means the writer's machine sealed the text; content is then the
 * envelope (the 10,000 code points were the writer's limit before sealing) and key_check is required.
 * Absent, null or false: a 1.2.0 request, answered exactly as before.
 */
function clientEncrypted(body: Body): boolean {
  const value = field(body, 'client_encrypted');
  if (value === undefined || value === null || value === false) return false;
  if (value !== true) fail('INVALID_CONTENT', 'client_encrypted', 'client_encrypted must be true or false');
  return true;
}

function envelope(body: Body): string {
  const value = field(body, 'content');
  if (typeof value !== 'string' || value.trim() === '') {
    fail('INVALID_CONTENT', 'content', 'content is required and must be a non-empty string');
  }
  if (value.length > ENVELOPE_MAX_LENGTH) {
    fail('CONTENT_TOO_LONG', 'content', `an encrypted content must be at most ${ENVELOPE_MAX_LENGTH} characters`);
  }
  if (!parseEnvelope(value)) {
    fail('INVALID_CONTENT', 'content', 'with client_encrypted, content must be a vz1 envelope (vz1.<iv>.<ciphertext>, base64url)');
  }
  return value;
}

function keyCheck(body: Body): string {
  const value = field(body, 'key_check');
  if (!isKeyCheck(value)) {
    fail('INVALID_KEY_CHECK', 'key_check', 'with client_encrypted, key_check must be base64url(HMAC-SHA-256(key, "vanish key check v1")), 43 characters');
  }
  return value;
}

function expiryType(body: Body): ExpiryType {
  const value = field(body, 'expiry_type');
  if (value === undefined || value === null) return 'view';
  if (typeof value !== 'string' || !(EXPIRY_TYPES as readonly string[]).includes(value)) {
    fail('INVALID_EXPIRY_TYPE', 'expiry_type', 'expiry_type must be one of view, time, both');
  }
  return value as ExpiryType;
}

/**
 * A JSON integer in range. JSON does not tell `1000` from `1e3` or `1000.0` once parsed, and JSON
 * Schema's `integer` (our OpenAPI document) accepts all three, so an integral number is accepted;
 * fractions, strings, booleans and out-of-range values are not.
 */
function integer(body: Body, name: string, min: number, max: number, fallback: number, code: string): number {
  const value = field(body, name);
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(code, name, `${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function passcode(body: Body): string | null {
  const value = field(body, 'passcode');
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || hasLoneSurrogate(value) || codePointLength(value) > PASSCODE_MAX_CODE_POINTS) {
    fail('INVALID_PASSCODE', 'passcode', `passcode must be a string of 1 to ${PASSCODE_MAX_CODE_POINTS} characters`);
  }
  return value;
}

/** `null` and `""` mean "no address" (as an empty form field does); anything else must be one plain address. */
function email(body: Body, name: 'notification_email' | 'send_link_email'): string | null {
  const value = field(body, name);
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !isPlainEmail(value)) {
    fail('INVALID_EMAIL', name, `${name} must be a single e-mail address like name@example.com (at most ${EMAIL_MAX_LENGTH} characters)`);
  }
  return value;
}

/** DECISIONS 11: optional; `null` and `""` mean none. Addresses and https are checked at creation (NoteWebhooks). */
function webhookUrl(body: Body): string | null {
  const value = field(body, 'webhook_url');
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') fail('INVALID_WEBHOOK_URL', 'webhook_url', 'webhook_url must be a string');
  const parsed = parseWebhookUrl(value, { requireHttps: false });
  if (!parsed.ok) fail('INVALID_WEBHOOK_URL', 'webhook_url', parsed.reason);
  return value;
}

/** Present only when given, so that every 1.2.0 request validates to exactly what it did before. */
function webhookField(body: Body): { webhookUrl?: string } {
  const url = webhookUrl(body);
  return url === null ? {} : { webhookUrl: url };
}

/** `YYYY-MM-DD HH:MM:SS` (UTC, SPEC's format) or ISO 8601 with a zone (`2026-12-01T09:00:00Z`, `...+01:00`). */
const SPEC_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

export function parseReleaseTime(value: string): Date | undefined {
  if (SPEC_TIME.test(value)) {
    const date = new Date(`${value.replace(' ', 'T')}Z`);
    return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 19) !== value.replace(' ', 'T') ? undefined : date;
  }
  if (!ISO_TIME.test(value)) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/**
 * DECISIONS 16, additive: each present only when given, so that a 1.2.0 request validates as before.
 * Whether the times fit the note (after now, before its expiry) is the domain's check (it has the clock).
 */
function timeControls(body: Body): Pick<CreateNoteInput, 'shrinkAfterFirstViewMinutes' | 'availableFrom' | 'releaseAfterSilenceHours'> {
  const out: Pick<CreateNoteInput, 'shrinkAfterFirstViewMinutes' | 'availableFrom' | 'releaseAfterSilenceHours'> = {};
  if (field(body, 'shrink_after_first_view_minutes') !== undefined && field(body, 'shrink_after_first_view_minutes') !== null) {
    out.shrinkAfterFirstViewMinutes = integer(body, 'shrink_after_first_view_minutes', SHRINK_MINUTES_MIN, SHRINK_MINUTES_MAX, 0, 'INVALID_SHRINK_AFTER_FIRST_VIEW');
  }
  const from = field(body, 'available_from');
  if (from !== undefined && from !== null && from !== '') {
    const date = typeof from === 'string' ? parseReleaseTime(from) : undefined;
    if (!date) fail('INVALID_AVAILABLE_FROM', 'available_from', 'available_from must be a time as YYYY-MM-DD HH:MM:SS (UTC) or ISO 8601 with a zone');
    out.availableFrom = date;
  }
  if (field(body, 'release_after_silence_hours') !== undefined && field(body, 'release_after_silence_hours') !== null) {
    out.releaseAfterSilenceHours = integer(body, 'release_after_silence_hours', SILENCE_HOURS_MIN, SILENCE_HOURS_MAX, 0, 'INVALID_RELEASE_AFTER_SILENCE');
    if (out.availableFrom) {
      fail('INVALID_RELEASE_AFTER_SILENCE', 'release_after_silence_hours', 'release_after_silence_hours and available_from cannot be combined: choose one release');
    }
  }
  return out;
}

/**
 * DECISIONS 14: `files: [{ "size": n }, ...]`, the ciphertext sizes of the note's files, only beside
 * `client_encrypted` (files are always sealed on the writer's machine). Shape only: the count and byte
 * limits are the service's configuration (FileService.checkLimits). Present only when given.
 */
export function filesField(body: Record<string, unknown>, sealedByWriter: boolean): { files?: Array<{ size: number }> } {
  const value = field(body, 'files');
  if (value === undefined || value === null) return {};
  if (!sealedByWriter) fail('INVALID_FILES', 'files', 'files are sealed on the writer\'s machine: send them with client_encrypted true');
  if (!Array.isArray(value) || value.length === 0) fail('INVALID_FILES', 'files', 'files must be a non-empty array of { "size": bytes }');
  const files = (value as unknown[]).map((entry) => {
    const size = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? field(entry as Body, 'size') : undefined;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1) {
      fail('INVALID_FILES', 'files', 'each file must be { "size": n } with n the ciphertext bytes, an integer of at least 1');
    }
    return { size };
  });
  return { files };
}

export function validateCreateNote(body: unknown): CreateNoteInput {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    fail('INVALID_JSON', null, 'Request body must be a JSON object');
  }
  const input = body as Body;
  const sealedByWriter = clientEncrypted(input);
  return {
    content: sealedByWriter ? envelope(input) : content(input),
    keyCheck: sealedByWriter ? keyCheck(input) : null,
    expiryType: expiryType(input),
    expiryHours: integer(input, 'expiry_time', EXPIRY_HOURS_MIN, EXPIRY_HOURS_MAX, EXPIRY_HOURS_DEFAULT, 'INVALID_EXPIRY_TIME'),
    maxViews: integer(input, 'max_views', MAX_VIEWS_MIN, MAX_VIEWS_MAX, MAX_VIEWS_DEFAULT, 'INVALID_MAX_VIEWS'),
    passcode: passcode(input),
    notificationEmail: email(input, 'notification_email'),
    sendLinkEmail: email(input, 'send_link_email'),
    ...webhookField(input),
    ...timeControls(input),
    ...filesField(input, sealedByWriter),
  };
}

import { ValidationError, parseWebhookUrl, type ExpiryType } from '@vanish/common';
import { isKeyCheck } from '@vanish/envelope';
import { isKeyText, parseRequestEnvelope } from '@vanish/envelope/request-seal';
import {
  EXPIRY_HOURS_DEFAULT, EXPIRY_HOURS_MAX, EXPIRY_HOURS_MIN, EXPIRY_TYPES, MAX_VIEWS_DEFAULT, MAX_VIEWS_MAX, MAX_VIEWS_MIN,
  codePointLength, filesField, hasLoneSurrogate, isPlainEmail,
} from '../domain/create-note-validator';

/** DECISIONS 15's bounds. */
export const LABEL_MAX_CODE_POINTS = 500;
export const MAX_SUBMISSIONS_MIN = 1;
export const MAX_SUBMISSIONS_MAX = 1000;
export const MAX_SUBMISSIONS_DEFAULT = 1;
export const OPEN_DAYS_MIN = 1;
export const OPEN_DAYS_MAX = 90;
export const OPEN_DAYS_DEFAULT = 7;
export const ALLOWED_ORIGINS_MAX = 10;

/** A request as its maker asks for it (DECISIONS 15); the server never sees its private key. */
export interface CreateRequestInput {
  /** The requester's X25519 public key, base64url of 32 bytes. */
  publicKey: string;
  label: string;
  maxSubmissions: number;
  openDays: number;
  allowFiles: boolean;
  /** Each submission's expiry, as a note's (DECISIONS 3). */
  expiryType: ExpiryType;
  expiryHours: number;
  maxViews: number;
  notificationEmail: string | null;
  webhookUrl: string | null;
  /** Origins whose pages may frame the sender's form (`frame-ancestors`); none by default. */
  allowedOrigins: string[];
  lang?: string;
}

/** A sender's submission: the request envelope (`vr1.…`, request-seal.js) and the proof of its note key. */
export interface SubmissionInput {
  ephemeralPublicKey: string;
  /** The note envelope (`vz1.…`) inside the request envelope. */
  envelope: string;
  keyCheck: string;
  /**
   * DECISIONS 14 and 15: the ciphertext sizes of the answer's files, exactly as a note's creation declares them
   * (the manifest travels sealed in the envelope); absent: text alone.
   */
  files?: Array<{ size: number }>;
}

type Body = Record<string, unknown>;

function fail(code: string, parameter: string | null, message: string): never {
  throw new ValidationError(code, message, { parameter });
}

function objectBody(body: unknown): Body {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail('INVALID_JSON', null, 'Request body must be a JSON object');
  return body as Body;
}

function field(body: Body, name: string): unknown {
  return Object.prototype.hasOwnProperty.call(body, name) ? body[name] : undefined;
}

function integer(body: Body, name: string, min: number, max: number, fallback: number, code: string): number {
  const value = field(body, name);
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail(code, name, `${name} must be an integer from ${min} to ${max}`);
  return value;
}

/** An X25519 public key that is not all zeros (the one low-order point a sender's agreement could not use at all). */
export function isRequestPublicKey(value: unknown): value is string {
  return typeof value === 'string' && isKeyText(value) && !/^A{42}[AQgw]$/.test(value);
}

/** `https://host[:port]` (or http:// outside production), nothing else: what a frame-ancestors source names. */
export function parseOrigin(value: unknown, production: boolean): string | null {
  if (typeof value !== 'string' || value.length > 200) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && (production || url.protocol !== 'http:')) return null;
  if (url.username || url.password || (url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) return null;
  if (value.replace(/\/$/, '') !== url.origin) return null;
  return url.origin;
}

export function validateCreateRequest(raw: unknown, options: { production: boolean }): CreateRequestInput {
  const body = objectBody(raw);
  const publicKey = field(body, 'public_key');
  if (!isRequestPublicKey(publicKey)) fail('INVALID_PUBLIC_KEY', 'public_key', 'public_key must be an X25519 public key: base64url of 32 bytes, 43 characters');
  const label = field(body, 'label');
  if (typeof label !== 'string' || label.trim() === '' || hasLoneSurrogate(label)) fail('INVALID_LABEL', 'label', 'label must be a non-empty text shown to senders');
  if (codePointLength(label) > LABEL_MAX_CODE_POINTS) fail('LABEL_TOO_LONG', 'label', `label must be at most ${LABEL_MAX_CODE_POINTS} characters`);
  const type = field(body, 'expiry_type');
  if (type !== undefined && type !== null && (typeof type !== 'string' || !(EXPIRY_TYPES as readonly string[]).includes(type))) {
    fail('INVALID_EXPIRY_TYPE', 'expiry_type', 'expiry_type must be one of view, time, both');
  }
  const allowFiles = field(body, 'allow_files');
  if (allowFiles !== undefined && allowFiles !== null && typeof allowFiles !== 'boolean') fail('INVALID_ALLOW_FILES', 'allow_files', 'allow_files must be true or false');
  const email = field(body, 'notification_email');
  if (email !== undefined && email !== null && email !== '' && (typeof email !== 'string' || !isPlainEmail(email))) {
    fail('INVALID_EMAIL', 'notification_email', 'notification_email must be a single e-mail address like name@example.com');
  }
  const webhook = field(body, 'webhook_url');
  if (webhook !== undefined && webhook !== null && webhook !== '') {
    if (typeof webhook !== 'string') fail('INVALID_WEBHOOK_URL', 'webhook_url', 'webhook_url must be a string');
    const parsed = parseWebhookUrl(webhook, { requireHttps: false });
    if (!parsed.ok) fail('INVALID_WEBHOOK_URL', 'webhook_url', parsed.reason);
  }
  const originsField = field(body, 'allowed_origins');
  const origins: string[] = [];
  if (originsField !== undefined && originsField !== null) {
    if (!Array.isArray(originsField) || originsField.length > ALLOWED_ORIGINS_MAX) {
      fail('INVALID_ALLOWED_ORIGINS', 'allowed_origins', `allowed_origins must be a list of at most ${ALLOWED_ORIGINS_MAX} origins`);
    }
    for (const entry of originsField) {
      const origin = parseOrigin(entry, options.production);
      if (!origin) fail('INVALID_ALLOWED_ORIGINS', 'allowed_origins', `each allowed origin must be a bare origin such as https://www.example.com${options.production ? '' : ' (or http:// outside production)'}`);
      if (!origins.includes(origin)) origins.push(origin);
    }
  }
  return {
    publicKey,
    label,
    maxSubmissions: integer(body, 'max_submissions', MAX_SUBMISSIONS_MIN, MAX_SUBMISSIONS_MAX, MAX_SUBMISSIONS_DEFAULT, 'INVALID_MAX_SUBMISSIONS'),
    openDays: integer(body, 'open_days', OPEN_DAYS_MIN, OPEN_DAYS_MAX, OPEN_DAYS_DEFAULT, 'INVALID_OPEN_DAYS'),
    allowFiles: allowFiles === true,
    expiryType: (typeof type === 'string' ? type : 'view') as ExpiryType,
    expiryHours: integer(body, 'expiry_time', EXPIRY_HOURS_MIN, EXPIRY_HOURS_MAX, EXPIRY_HOURS_DEFAULT, 'INVALID_EXPIRY_TIME'),
    maxViews: integer(body, 'max_views', MAX_VIEWS_MIN, MAX_VIEWS_MAX, MAX_VIEWS_DEFAULT, 'INVALID_MAX_VIEWS'),
    notificationEmail: typeof email === 'string' && email !== '' ? email : null,
    webhookUrl: typeof webhook === 'string' && webhook !== '' ? webhook : null,
    allowedOrigins: origins,
  };
}

export function validateSubmission(raw: unknown): SubmissionInput {
  const body = objectBody(raw);
  const parsed = parseRequestEnvelope(field(body, 'content'));
  if (!parsed) {
    fail('INVALID_CONTENT', 'content', 'content must be a request envelope sealed to the request\'s key: vr1.<ephemeral public key>.<iv>.<ciphertext> (docs/requests.md)');
  }
  if (!isRequestPublicKey(parsed.ephemeralPublicKey)) fail('INVALID_CONTENT', 'content', 'the envelope\'s ephemeral public key is not usable');
  const keyCheck = field(body, 'key_check');
  if (!isKeyCheck(keyCheck)) fail('INVALID_KEY_CHECK', 'key_check', 'key_check must be base64url(HMAC-SHA-256(K, "vanish key check v1")), 43 characters');
  // A submission is always sealed on the sender's machine: `files` has the shape a note's creation gives it.
  return { ephemeralPublicKey: parsed.ephemeralPublicKey, envelope: parsed.envelope, keyCheck, ...filesField(body, true) };
}

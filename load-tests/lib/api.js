// One function per operation of the system, each with its checks. Requests carry a `name` tag so that
// thresholds and the summary are per operation, never per uuid (the uuid is a secret: it must not become
// a metric label).
import http from 'k6/http';
import { check } from 'k6';
import { Counter } from 'k6/metrics';
import { BASE_URL, ORIGIN, WEB_PAGES } from './config.js';
import { checkCreated, checkError, checkMetadata, checkStats, header } from './checks.js';

const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** Reveals skipped because the deployment serves no note page with a form (WEB_PAGES=auto). */
export const webPagesUnavailable = new Counter('web_pages_unavailable');

/**
 * @typedef {{ content: string, expiry_type?: 'view' | 'time' | 'both', expiry_time?: number, max_views?: number,
 *   passcode?: string, notification_email?: string, send_link_email?: string }} CreateInput
 */

/**
 * POST /api/create.php and its checks.
 * @param {CreateInput} input
 * @param {string} [name] the request's `name` tag (default `create`, or `create_passcode` with a passcode)
 */
export function createNote(input, name) {
  const res = http.post(`${BASE_URL}/api/create.php`, JSON.stringify(input), {
    headers: JSON_HEADERS,
    tags: { name: name ?? (input.passcode ? 'create_passcode' : 'create') },
  });
  const type = input.expiry_type || 'view';
  const maxViews = type === 'time' ? 100 : input.max_views || 1;
  return checkCreated(res, { maxViews, hasPasscode: Boolean(input.passcode) });
}

/**
 * GET /api/view/{uuid}.php expecting the note.
 * @param {string} uuid
 * @param {{ currentViews?: number, expiryHours?: number }} [expected]
 */
export function readMetadata(uuid, expected) {
  const res = http.get(`${BASE_URL}/api/view/${uuid}.php`, { tags: { name: 'metadata' } });
  return checkMetadata(res, uuid, expected);
}

/**
 * GET /api/view/{uuid}.php expecting 404 NOTE_NOT_FOUND (unknown, destroyed or expired: the same to the API).
 * @param {string} uuid
 * @param {string} what
 */
export function readMetadataGone(uuid, what) {
  const res = http.get(`${BASE_URL}/api/view/${uuid}.php`, {
    tags: { name: 'metadata_404' },
    responseCallback: http.expectedStatuses(404),
  });
  return checkError(res, what, 404, 'NOTE_NOT_FOUND');
}

/** GET /api/stats.php and its checks. */
export function readStats() {
  const res = http.get(`${BASE_URL}/api/stats.php`, { tags: { name: 'stats' } });
  return checkStats(res);
}

/**
 * @param {string} text
 */
function decodeEntities(text) {
  return text
    .replace(/&quot;/g, '"')
    .replace(/&#0*39;|&apos;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#x([0-9a-f]+);/gi, (_m, hex) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_m, dec) => String.fromCodePoint(parseInt(dec, 10)))
    .replace(/&amp;/g, '&');
}

/**
 * @param {string} tag
 * @param {string} name
 */
function attribute(tag, name) {
  const match = tag.match(new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s>]+))`, 'i'));
  if (!match) return undefined;
  return decodeEntities(match[1] ?? match[2] ?? match[3] ?? '');
}

/**
 * @typedef {{ action: string, fields: Record<string, string>, passcodeField?: string }} RevealForm
 */

/**
 * The reveal form of a note page: its action and the fields a browser would send (hidden inputs such as a
 * CSRF form token, the named submit button), and the name of the passcode input if there is one.
 * Parsed with regular expressions so that the script needs no HTML module.
 * @param {string} html
 * @param {string} uuid
 * @returns {RevealForm | undefined}
 */
export function findRevealForm(html, uuid) {
  const forms = [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)]
    .filter((m) => (attribute(m[1], 'method') || 'get').toLowerCase() === 'post');
  const form = forms.find((m) => (attribute(m[1], 'action') || '').includes(uuid)) || forms[0];
  if (!form) return undefined;
  const rawAction = attribute(form[1], 'action') || `/${uuid}`;
  const action = /^https?:\/\//.test(rawAction)
    ? rawAction
    : rawAction.startsWith('/') ? `${ORIGIN}${rawAction}` : `${BASE_URL}/${rawAction}`;
  /** @type {Record<string, string>} */
  const fields = {};
  /** @type {string | undefined} */
  let passcodeField;
  for (const input of form[2].matchAll(/<(input|button)\b([^>]*)>/gi)) {
    const tag = input[2];
    const name = attribute(tag, 'name');
    if (!name) continue;
    const type = (attribute(tag, 'type') || (input[1].toLowerCase() === 'button' ? 'submit' : 'text')).toLowerCase();
    if (type === 'password') passcodeField = name;
    else if (type === 'hidden' || type === 'submit') fields[name] = attribute(tag, 'value') ?? '';
  }
  return { action, fields, passcodeField };
}

/**
 * GET /{uuid}: the note page, which must not consume a view (DECISIONS 9).
 * @param {string} uuid
 * @returns {RevealForm | undefined} the reveal form, or undefined when the page or form is missing
 */
export function viewPage(uuid) {
  // In auto mode a missing page (404) is not a failed request; `responseCallback: null` would disable the
  // failure metric altogether in k6, so the key is only set when needed.
  /** @type {import('k6/http').Params} */
  const params = { tags: { name: 'page' } };
  if (WEB_PAGES !== 'required') params.responseCallback = http.expectedStatuses({ min: 200, max: 499 });
  const res = http.get(`${BASE_URL}/${uuid}`, params);
  const isPage = res.status === 200 && /^text\/html/.test(header(res, 'Content-Type') || '');
  const form = isPage && typeof res.body === 'string' ? findRevealForm(res.body, uuid) : undefined;
  if (WEB_PAGES === 'auto' && form === undefined) {
    webPagesUnavailable.add(1);
    return undefined;
  }
  check(res, {
    'page: status 200 HTML': () => isPage,
    'page: has a reveal form': () => form !== undefined,
    'page: cannot be framed': (r) =>
      /frame-ancestors 'none'/.test(header(r, 'Content-Security-Policy') || '') || header(r, 'X-Frame-Options') === 'DENY',
    'page: Cache-Control no-store': (r) => (header(r, 'Cache-Control') || '').includes('no-store'),
  });
  return form;
}

/**
 * POST /{uuid}: the reveal, as the page's form sends it (with the Origin a browser adds).
 * @param {RevealForm} form
 * @param {string} content the content the note must show
 * @param {string} [passcode]
 */
export function reveal(form, content, passcode) {
  /** @type {Record<string, string>} */
  const fields = { ...form.fields };
  if (passcode !== undefined) fields[form.passcodeField || 'passcode'] = passcode;
  const res = http.post(form.action, fields, {
    headers: { Origin: ORIGIN, Referer: form.action },
    tags: { name: passcode ? 'reveal_passcode' : 'reveal' },
  });
  return check(res, {
    'reveal: status 200': (r) => r.status === 200,
    'reveal: shows the content': (r) => typeof r.body === 'string' && r.body.includes(content),
    'reveal: Cache-Control no-store': (r) => (header(r, 'Cache-Control') || '').includes('no-store'),
  });
}

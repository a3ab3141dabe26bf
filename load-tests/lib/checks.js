// Checks of every answer's shape, per SPEC 2, 4, 7 and DECISIONS 4 and 8. Each function records k6 checks
// (so they count in the `checks` rate and its threshold) and returns the parsed body when the shape holds.
import { check } from 'k6';

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const EXPIRY_TYPES = ['view', 'time', 'both'];

/**
 * A header by name, case-insensitively (k6 canonicalises names: `API-Version` arrives as `Api-Version`).
 * @param {{ headers: Record<string, string> }} res
 * @param {string} name
 * @returns {string | undefined}
 */
export function header(res, name) {
  const wanted = name.toLowerCase();
  for (const key of Object.keys(res.headers)) {
    if (key.toLowerCase() === wanted) return res.headers[key];
  }
  return undefined;
}

/**
 * The body as JSON, or undefined when it is not JSON.
 * @param {import('k6/http').Response} res
 * @returns {any}
 */
export function jsonOf(res) {
  try {
    return res.json();
  } catch (_error) {
    return undefined;
  }
}

/** @param {unknown} value */
const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
/** @param {unknown} value */
const isCount = (value) => Number.isInteger(value) && /** @type {number} */ (value) >= 0;

/**
 * `YYYY-MM-DD HH:MM:SS` (UTC, DECISIONS 2) to epoch milliseconds.
 * @param {string} text
 */
export function parseTimestamp(text) {
  return Date.parse(`${text.replace(' ', 'T')}Z`);
}

/**
 * DECISIONS 8 headers on every API answer.
 * @param {import('k6/http').Response} res
 * @param {string} what
 */
export function checkApiHeaders(res, what) {
  return check(res, {
    [`${what}: API-Version 1.2.0`]: (r) => header(r, 'API-Version') === '1.2.0',
    [`${what}: Cache-Control no-store`]: (r) => (header(r, 'Cache-Control') || '').includes('no-store'),
    [`${what}: X-Content-Type-Options nosniff`]: (r) => header(r, 'X-Content-Type-Options') === 'nosniff',
    [`${what}: JSON content type`]: (r) => /^application\/json/.test(header(r, 'Content-Type') || ''),
  });
}

/**
 * SPEC 4.1 / 2.2: the creation result.
 * @param {import('k6/http').Response} res
 * @param {{ maxViews: number, hasPasscode: boolean }} expected
 * @returns {{ uuid: string, url: string, expires_at: string, max_views: number, has_passcode: boolean } | undefined}
 */
export function checkCreated(res, expected) {
  const body = jsonOf(res);
  const ok = check(body, {
    'create: status 200': () => res.status === 200,
    'create: success true': (b) => isObject(b) && b.success === true,
    'create: uuid is a lowercase v4 UUID': (b) => isObject(b) && UUID_V4.test(String(b.uuid)),
    'create: url is {base_url}/{uuid}': (b) =>
      isObject(b) && typeof b.url === 'string' && /^https?:\/\//.test(b.url) && b.url.endsWith(`/${b.uuid}`),
    'create: expires_at is YYYY-MM-DD HH:MM:SS': (b) => isObject(b) && TIMESTAMP.test(String(b.expires_at)),
    'create: max_views is the effective count': (b) => isObject(b) && b.max_views === expected.maxViews,
    'create: has_passcode as requested': (b) => isObject(b) && b.has_passcode === expected.hasPasscode,
    'create: no content or passcode echoed': (b) =>
      isObject(b) && !('content' in b) && !('passcode' in b) && !('notification_email' in b),
  });
  checkApiHeaders(res, 'create');
  return ok ? body : undefined;
}

/**
 * SPEC 4.2 / 2.1: the metadata answer.
 * @param {import('k6/http').Response} res
 * @param {string} uuid
 * @param {{ currentViews?: number, expiryHours?: number }} [expected]
 */
export function checkMetadata(res, uuid, expected = {}) {
  const body = jsonOf(res);
  /** @param {any} b */
  const note = (b) => (isObject(b) && isObject(b.note) ? b.note : undefined);
  const ok = check(body, {
    'metadata: status 200': () => res.status === 200,
    'metadata: success true and a note object': (b) => isObject(b) && b.success === true && note(b) !== undefined,
    'metadata: uuid is the one asked for': (b) => note(b)?.uuid === uuid,
    'metadata: field types per SPEC 2.1': (b) => {
      const n = note(b);
      return (
        n !== undefined &&
        typeof n.has_passcode === 'boolean' &&
        EXPIRY_TYPES.includes(n.expiry_type) &&
        TIMESTAMP.test(String(n.expires_at)) &&
        TIMESTAMP.test(String(n.created_at)) &&
        Number.isInteger(n.max_views) && n.max_views >= 1 && n.max_views <= 100 &&
        isCount(n.current_views) && n.current_views < n.max_views
      );
    },
    'metadata: is_destroyed false on a 200': (b) => note(b)?.is_destroyed === false,
    'metadata: current_views as expected': (b) =>
      expected.currentViews === undefined || note(b)?.current_views === expected.currentViews,
    'metadata: expires_at = created_at + expiry_time': (b) => {
      const n = note(b);
      if (expected.expiryHours === undefined) return true;
      if (n === undefined) return false;
      const span = parseTimestamp(n.expires_at) - parseTimestamp(n.created_at);
      return Math.abs(span - expected.expiryHours * 3600 * 1000) <= 1000;
    },
    'metadata: nothing secret in the answer': (b) =>
      note(b) !== undefined && !('content' in note(b)) && !('passcode' in note(b)) && !('notification_email' in note(b)),
  });
  checkApiHeaders(res, 'metadata');
  return ok ? note(body) : undefined;
}

/**
 * SPEC 4.3 / 2.3: the statistics answer.
 * @param {import('k6/http').Response} res
 */
export function checkStats(res) {
  const body = jsonOf(res);
  /** @param {any} b */
  const stats = (b) => (isObject(b) && isObject(b.stats) ? b.stats : undefined);
  const ok = check(body, {
    'stats: status 200': () => res.status === 200,
    'stats: success true and a stats object': (b) => isObject(b) && b.success === true && stats(b) !== undefined,
    'stats: counters are non-negative integers': (b) => {
      const s = stats(b);
      return s !== undefined && ['total_notes_created', 'active_notes', 'destroyed_notes', 'notes_24h', 'notes_7d', 'notes_30d']
        .every((field) => isCount(s[field]));
    },
    'stats: counters are consistent': (b) => {
      const s = stats(b);
      return s !== undefined && s.active_notes + s.destroyed_notes === s.total_notes_created &&
        s.notes_24h <= s.notes_7d && s.notes_7d <= s.notes_30d && s.notes_30d <= s.total_notes_created;
    },
    'stats: success_rate is a percentage': (b) => {
      const s = stats(b);
      return s !== undefined && typeof s.success_rate === 'number' && s.success_rate >= 0 && s.success_rate <= 100;
    },
    'stats: health_status has database, encryption, email': (b) => {
      const h = stats(b)?.health_status;
      return isObject(h) && ['database', 'encryption', 'email'].every((field) => typeof h[field] === 'string');
    },
    'stats: generated_at is YYYY-MM-DD HH:MM:SS': (b) => TIMESTAMP.test(String(stats(b)?.generated_at)),
  });
  checkApiHeaders(res, 'stats');
  return ok ? stats(body) : undefined;
}

/**
 * SPEC 7 / DECISIONS 4: an error answer with its body shape.
 * @param {import('k6/http').Response} res
 * @param {string} what a name for the checks
 * @param {number} status
 * @param {string} [code]
 * @param {string | null} [parameter]
 */
export function checkError(res, what, status, code, parameter) {
  const body = jsonOf(res);
  return check(body, {
    [`${what}: status ${status}`]: () => res.status === status,
    [`${what}: SPEC 7 error body`]: (b) =>
      isObject(b) && typeof b.error === 'string' && b.error.length > 0 && typeof b.code === 'string' &&
      /^[A-Z][A-Z_]*$/.test(b.code) && isObject(b.details) &&
      (b.details.parameter === null || typeof b.details.parameter === 'string') && typeof b.details.message === 'string',
    [`${what}: code ${code ?? '(any)'}`]: (b) => code === undefined || (isObject(b) && b.code === code),
    [`${what}: details.parameter ${parameter === undefined ? '(any)' : String(parameter)}`]: (b) =>
      parameter === undefined || (isObject(b) && isObject(b.details) && b.details.parameter === parameter),
    [`${what}: no stack trace`]: () => !/\bat .+\(.*:\d+:\d+\)|node_modules/.test(String(res.body)),
  });
}

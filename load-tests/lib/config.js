// Configuration of every scenario, from k6's __ENV (`-e NAME=value` on k6's command line, or the environment).

/**
 * @param {string | undefined} text
 * @param {number} fallback
 */
export function numberFrom(text, fallback) {
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value)) throw new Error(`not a number: ${text}`);
  return value;
}

/** Origin of the deployment under test, e.g. https://notes.example.org (no trailing slash). */
export const BASE_URL = (__ENV.BASE_URL || 'http://localhost:8080').replace(/\/+$/, '');

/** The scheme://host[:port] part of BASE_URL, sent as Origin on the reveal form (its CSRF check). */
export const ORIGIN = (BASE_URL.match(/^https?:\/\/[^/]+/) || [BASE_URL])[0];

/** Mean think time between a user's steps, in seconds (0 in CI's one-iteration run). */
export const THINK_TIME = numberFrom(__ENV.THINK_TIME, 1);

/**
 * The web pages (GET /{uuid}, reveal POST /{uuid}):
 *  - `auto` (default): used when the deployment serves them; when GET /{uuid} is not an HTML page with a
 *    form, the reveal is skipped and counted in the `web_pages_unavailable` metric instead of failing;
 *  - `required`: a missing page or form fails the checks;
 *  - `off`: API only.
 */
export const WEB_PAGES = /** @type {'auto' | 'required' | 'off'} */ (__ENV.WEB_PAGES || 'auto');

/** `all`: every journey once per iteration (CI's one-iteration run); otherwise a weighted random pick. */
export const MIX = __ENV.MIX || 'weighted';

/** Notes each VU creates on its first iteration for the metadata-read journey (kept in that VU only). */
export const SEED_NOTES = numberFrom(__ENV.SEED_NOTES, 3);

/** The limits the deployment is expected to enforce (SPEC 8 defaults), used by rate-limits.js. */
export const EXPECTED_LIMITS = {
  create: numberFrom(__ENV.EXPECT_CREATE_LIMIT, 10),
  view: numberFrom(__ENV.EXPECT_VIEW_LIMIT, 50),
  stats: numberFrom(__ENV.EXPECT_STATS_LIMIT, 20),
};

/** Length of the limit window in seconds (DECISIONS 5: one hour). Retry-After never exceeds it. */
export const LIMIT_WINDOW_SECONDS = numberFrom(__ENV.LIMIT_WINDOW_SECONDS, 3600);

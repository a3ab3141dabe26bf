// Rate limits (SPEC 8, DECISIONS 5): from one source address, the request after the limit is a 429 with
// Retry-After and the SPEC 7 body (code RATE_LIMITED), for each class: stats 20, view 50, create 10 per hour.
// Each limited answer carries RateLimit-Limit/Remaining/Reset. The classes are independent, and metadata
// reads and note pages share the view count.
//
// Run it from an address with no traffic in the current window (e.g. right after the gateway started),
// against a deployment with the default limits:
//   k6 run --no-usage-report -e BASE_URL=https://notes.example.org load-tests/rate-limits.js
// Limits set otherwise are told with EXPECT_CREATE_LIMIT / EXPECT_VIEW_LIMIT / EXPECT_STATS_LIMIT.
// It spends the whole window of this address: nothing else from it works for up to an hour afterwards.
import http from 'k6/http';
import { check, fail, group } from 'k6';
import { BASE_URL, EXPECTED_LIMITS, LIMIT_WINDOW_SECONDS } from './lib/config.js';
import { checkError, header } from './lib/checks.js';

/** @type {import('k6/options').Options} */
export const options = {
  vus: 1,
  iterations: 1,
  thresholds: { checks: ['rate==1'] },
};

/**
 * @param {import('k6/http').Response} res
 * @param {string} name
 */
function numberHeader(res, name) {
  const text = header(res, name);
  return text !== undefined && /^\d+$/.test(text.trim()) ? Number(text) : undefined;
}

/**
 * Sends requests of one class until the first 429 (at most limit + 5) and checks where it came.
 * @param {string} kind 'create' | 'view' | 'stats'
 * @param {number} limit the expected limit
 * @param {number} alreadyUsed requests of this class this script sent before (in the same window)
 * @param {(index: number) => import('k6/http').Response} send the index-th request of the class in this run
 */
function exhaust(kind, limit, alreadyUsed, send) {
  /** @type {import('k6/http').Response[]} */
  const answers = [];
  for (let i = 0; i < limit + 5; i += 1) {
    const res = send(i);
    answers.push(res);
    if (res.status === 429) break;
  }
  const allowed = answers.filter((r) => r.status !== 429);
  const first = answers[0];
  const rejected = answers[answers.length - 1];
  check(null, {
    [`${kind}: RateLimit-Limit is ${limit}`]: () => numberHeader(first, 'RateLimit-Limit') === limit,
    [`${kind}: RateLimit-Remaining counts down by one`]: () =>
      allowed.every((r, i) => numberHeader(r, 'RateLimit-Remaining') === limit - alreadyUsed - i - 1),
    [`${kind}: RateLimit-Reset within the window`]: () => allowed.every((r) => {
      const reset = numberHeader(r, 'RateLimit-Reset');
      return reset !== undefined && reset <= LIMIT_WINDOW_SECONDS;
    }),
    [`${kind}: request ${limit + 1} of the window is the first 429`]: () =>
      rejected.status === 429 && alreadyUsed + allowed.length === limit,
    [`${kind}: every request below the limit answered 200`]: () => allowed.every((r) => r.status === 200),
  });
  if (rejected.status !== 429) fail(`${kind}: no 429 after ${answers.length} requests`);
  checkError(rejected, `${kind} 429`, 429, 'RATE_LIMITED');
  const retryAfter = numberHeader(rejected, 'Retry-After');
  check(rejected, {
    [`${kind} 429: Retry-After in seconds, within the window`]: () =>
      retryAfter !== undefined && retryAfter > 0 && retryAfter <= LIMIT_WINDOW_SECONDS,
    [`${kind} 429: RateLimit-Remaining 0`]: (r) => numberHeader(r, 'RateLimit-Remaining') === 0,
    [`${kind} 429: API-Version 1.2.0`]: (r) => header(r, 'API-Version') === '1.2.0',
  });
  // DECISIONS 5: a rejected request does not extend the window.
  const again = send(answers.length);
  const retryAgain = numberHeader(again, 'Retry-After');
  check(again, {
    [`${kind}: still 429 afterwards`]: (r) => r.status === 429,
    [`${kind}: a rejected request does not extend the window`]: () =>
      retryAfter !== undefined && retryAgain !== undefined && retryAgain <= retryAfter,
  });
}

const limited = http.expectedStatuses(200, 429);
const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** @param {string} content */
function create(content) {
  return http.post(`${BASE_URL}/api/create.php`, JSON.stringify({ content, expiry_type: 'time', expiry_time: 1 }), {
    headers: JSON_HEADERS, responseCallback: limited, tags: { name: 'create' },
  });
}

export default function () {
  let createsUsed = 0;
  group('stats limit', () => {
    exhaust('stats', EXPECTED_LIMITS.stats, 0, () =>
      http.get(`${BASE_URL}/api/stats.php`, { responseCallback: limited, tags: { name: 'stats' } }));
  });
  group('view limit', () => {
    // Classes are independent: with stats spent, a create still works.
    const made = create('rate-limit probe');
    createsUsed += 1;
    const body = made.status === 200 ? /** @type {any} */ (made.json()) : undefined;
    check(made, { 'create works while stats is limited': (r) => r.status === 200 });
    if (!body) fail('cannot create the note the view limit is measured on');
    // DECISIONS 5: the note page (GET /{uuid}) counts as a view too: every other request below the limit
    // is a page view, and RateLimit-Remaining must count them all down together.
    exhaust('view', EXPECTED_LIMITS.view, 0, (i) => (i < EXPECTED_LIMITS.view && i % 2 === 1
      ? http.get(`${BASE_URL}/${body.uuid}`, { responseCallback: limited, tags: { name: 'page' } })
      : http.get(`${BASE_URL}/api/view/${body.uuid}.php`, { responseCallback: limited, tags: { name: 'metadata' } })));
  });
  group('create limit', () => {
    exhaust('create', EXPECTED_LIMITS.create, createsUsed, () => create('rate-limit probe'));
  });
}

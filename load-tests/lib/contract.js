// Error answers every deployment must give (SPEC 7, DECISIONS 4 and 8), exercised by the smoke scenario.
import http from 'k6/http';
import { check, group } from 'k6';
import { BASE_URL } from './config.js';
import { checkError, header } from './checks.js';

/** A random version-4 UUID that names no note. */
export function randomUuid() {
  const hex = (/** @type {number} */ n) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(Math.random() * 4)]}${hex(3)}-${hex(12)}`;
}

const JSON_HEADERS = { 'Content-Type': 'application/json' };

export function errorContract() {
  group('error answers', () => {
    const expect400 = { responseCallback: http.expectedStatuses(400), tags: { name: 'create_400' } };
    checkError(http.post(`${BASE_URL}/api/create.php`, JSON.stringify({ content: '' }), { ...expect400, headers: JSON_HEADERS }),
      'empty content', 400, 'INVALID_CONTENT', 'content');
    checkError(http.post(`${BASE_URL}/api/create.php`, JSON.stringify({ content: 'x', max_views: 101 }), { ...expect400, headers: JSON_HEADERS }),
      'max_views 101', 400, 'INVALID_MAX_VIEWS', 'max_views');
    checkError(http.post(`${BASE_URL}/api/create.php`, '{"content":', { ...expect400, headers: JSON_HEADERS }),
      'invalid JSON', 400, 'INVALID_JSON');
    checkError(http.get(`${BASE_URL}/api/view/${randomUuid()}.php`, { responseCallback: http.expectedStatuses(404), tags: { name: 'metadata_404' } }),
      'unknown note', 404, 'NOTE_NOT_FOUND');
    checkError(http.get(`${BASE_URL}/api/no-such-operation.php`, { responseCallback: http.expectedStatuses(404), tags: { name: 'unknown_404' } }),
      'unknown /api path', 404, 'NOT_FOUND');
    const wrongMethod = http.del(`${BASE_URL}/api/stats.php`, null, { responseCallback: http.expectedStatuses(405), tags: { name: 'stats_405' } });
    checkError(wrongMethod, 'DELETE stats', 405, 'METHOD_NOT_ALLOWED');
    check(wrongMethod, { 'DELETE stats: Allow names GET': (r) => /\bGET\b/.test(header(r, 'Allow') || '') });
  });
}

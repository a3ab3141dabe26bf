import { readFileSync } from 'node:fs';
import { ApiChecker, OPENAPI_DOCUMENT_PATH, checkApiAnswer } from './openapi';

const base = {
  'content-type': 'application/json; charset=utf-8',
  'api-version': '1.2.0',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'x-xss-protection': '0',
  'permissions-policy': JSON.parse(readFileSync(OPENAPI_DOCUMENT_PATH, 'utf8')).components.headers.PermissionsPolicy.schema.const as string,
};
const UUID = '0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10';
const created = {
  success: true, uuid: UUID, url: `http://localhost:8080/${UUID}`,
  expires_at: '2026-01-02 00:00:00', max_views: 1, has_passcode: false, receipt_url: 'http://localhost:8080/r/receipt-id',
};
const error = (code: string, parameter: string | null = null) => ({ error: 'm', code, details: { parameter, message: 'm' } });

describe('checkApiAnswer', () => {
  it('when the OpenAPI document is loaded, then it is OpenAPI 3.1 with the three SPEC operations and every DECISIONS 4 code', () => {
    const doc = JSON.parse(readFileSync(OPENAPI_DOCUMENT_PATH, 'utf8'));
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.2.0');
    expect(doc.paths['/api/create.php'].post.operationId).toBe('createNote');
    expect(doc.paths['/api/view/{uuid}.php'].get.operationId).toBe('getNoteMetadata');
    expect(doc.paths['/api/stats.php'].get.operationId).toBe('getStats');
    expect(doc.components.schemas.ErrorCode.enum).toEqual(expect.arrayContaining([
      'INVALID_CONTENT', 'CONTENT_TOO_LONG', 'INVALID_EXPIRY_TYPE', 'INVALID_EXPIRY_TIME', 'INVALID_MAX_VIEWS',
      'INVALID_PASSCODE', 'INVALID_EMAIL', 'INVALID_JSON', 'INVALID_CONTENT_TYPE', 'PAYLOAD_TOO_LARGE', 'HTTPS_REQUIRED',
      'NOTE_NOT_FOUND', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'RATE_LIMITED', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE',
      'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT',
    ]));
    for (const [path, method, statuses] of [
      ['/api/create.php', 'post', ['200', '400', '429', '500', '502', '503', '504']],
      ['/api/view/{uuid}.php', 'get', ['200', '400', '404', '429', '500', '502', '503', '504']],
      ['/api/stats.php', 'get', ['200', '400', '429', '500', '502', '503', '504']],
      ['/api/create.php', 'put', ['405']],
    ] as const) {
      expect(Object.keys(doc.paths[path][method].responses)).toEqual(expect.arrayContaining([...statuses]));
    }
  });

  it('when a create answer is as documented, then it passes', () => {
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 200, headers: base, body: created })).not.toThrow();
  });

  it('when a body arrives as text, then it is parsed and checked', () => {
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 200, headers: base, body: JSON.stringify(created) })).not.toThrow();
  });

  it('when the status is not documented for the operation, then it throws', () => {
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 201, headers: base, body: created }))
      .toThrow(/status 201 is not documented/);
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 404, headers: base, body: error('NOT_FOUND') }))
      .toThrow(/status 404 is not documented/);
  });

  it('when a required header is missing or wrong, then it throws', () => {
    const { 'api-version': _omit, ...noVersion } = base;
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 200, headers: noVersion, body: created }))
      .toThrow(/required header API-Version is missing/);
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 200, headers: { ...base, 'cache-control': 'max-age=60' }, body: created }))
      .toThrow(/header Cache-Control/);
  });

  it('when the body does not validate, then it throws', () => {
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 200, headers: base, body: { ...created, content: 'leak' } }))
      .toThrow(/must NOT have additional properties/);
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 200, headers: base, body: { ...created, expires_at: '2026-01-02T00:00:00Z' } }))
      .toThrow(/body/);
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 400, headers: base, body: error('NOTE_NOT_FOUND') }))
      .toThrow(/code must be equal to one of the allowed values/);
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 400, headers: base, body: { error: 'x', code: 'INVALID_JSON' } }))
      .toThrow(/details/);
  });

  it('when a concrete view path is given, then it is matched to its template', () => {
    const note = {
      uuid: UUID, has_passcode: false, expiry_type: 'view', expires_at: '2026-01-31 00:00:00', max_views: 1,
      current_views: 0, is_destroyed: false, created_at: '2026-01-01 00:00:00',
    };
    expect(() => checkApiAnswer({ method: 'GET', path: `/api/view/${UUID}.php`, status: 200, headers: base, body: { success: true, note } })).not.toThrow();
    expect(() => checkApiAnswer({ method: 'GET', path: '/api/view/nope.php?x=1', status: 404, headers: base, body: error('NOTE_NOT_FOUND') })).not.toThrow();
    expect(() => checkApiAnswer({ method: 'GET', path: `/api/view/${UUID}.php`, status: 200, headers: base, body: { success: true, note: { ...note, is_destroyed: true } } }))
      .toThrow(/is_destroyed/);
  });

  it('when a 405 lacks Allow, or a 503 lacks Retry-After, then it throws', () => {
    expect(() => checkApiAnswer({ method: 'DELETE', path: '/api/create.php', status: 405, headers: { ...base, allow: 'POST, OPTIONS' }, body: error('METHOD_NOT_ALLOWED') })).not.toThrow();
    expect(() => checkApiAnswer({ method: 'DELETE', path: '/api/create.php', status: 405, headers: base, body: error('METHOD_NOT_ALLOWED') }))
      .toThrow(/Allow is missing/);
    expect(() => checkApiAnswer({ method: 'GET', path: `/api/view/${UUID}.php`, status: 503, headers: base, body: error('SERVICE_UNAVAILABLE') }))
      .toThrow(/Retry-After is missing/);
  });

  it('when OPTIONS answers 204 with Allow and no body, then it passes; with a body it throws', () => {
    const headers = { ...base, allow: 'GET, HEAD, OPTIONS' };
    expect(() => checkApiAnswer({ method: 'OPTIONS', path: '/api/stats.php', status: 204, headers, body: '' })).not.toThrow();
    expect(() => checkApiAnswer({ method: 'OPTIONS', path: '/api/stats.php', status: 204, headers, body: { a: 1 } })).toThrow(/no body/);
  });

  it('when HEAD is checked, then the GET documentation applies without a body', () => {
    expect(() => checkApiAnswer({ method: 'HEAD', path: '/api/view/x.php', status: 404, headers: base, body: '' })).not.toThrow();
    expect(() => checkApiAnswer({ method: 'HEAD', path: '/api/view/x.php', status: 404, headers: base, body: error('NOTE_NOT_FOUND') })).toThrow(/HEAD/);
  });

  it('when the path is an unknown /api path, then only 404 NOT_FOUND passes', () => {
    expect(() => checkApiAnswer({ method: 'GET', path: '/api/nope', status: 404, headers: base, body: error('NOT_FOUND') })).not.toThrow();
    expect(() => checkApiAnswer({ method: 'GET', path: '/api/nope', status: 404, headers: base, body: error('NOTE_NOT_FOUND') })).toThrow();
    expect(() => checkApiAnswer({ method: 'GET', path: '/api/nope', status: 200, headers: base, body: {} })).toThrow(/matches no documented template/);
  });

  it('when a 429 lacks the rate-limit headers, then it throws', () => {
    const headers = { ...base, 'retry-after': '3600', 'ratelimit-limit': '10', 'ratelimit-remaining': '0', 'ratelimit-reset': '3600' };
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 429, headers, body: error('RATE_LIMITED') })).not.toThrow();
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 429, headers: base, body: error('RATE_LIMITED') }))
      .toThrow(/Retry-After is missing/);
  });

  it('when the media type is not JSON, then it throws', () => {
    expect(() => checkApiAnswer({ method: 'POST', path: '/api/create.php', status: 200, headers: { ...base, 'content-type': 'text/html' }, body: '<p>' }))
      .toThrow(/Content-Type "text\/html" is not documented/);
  });

  it('when headers come as a fetch Headers object, then they are read', () => {
    const checker = ApiChecker.fromFile();
    expect(() => checker.check({ method: 'POST', path: '/api/create.php', status: 200, headers: new Headers(base), body: created })).not.toThrow();
  });
});

import express from 'express';
import { Registry } from 'prom-client';
import {
  type Listening, PERMISSIONS_POLICY, apiHeaders, apiNotFound, appServedHere, bodyRefusalStatus, createAdminApp, errorHandler, jsonBody, listen, methodsOnly, requestId,
} from './http';
import { type Logger, silentLogger } from './logger';

/** A logger that keeps what it is given, to show what an answer would have written to the log. */
function recordingLogger(): Logger & { records: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> } {
  const records: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => { records.push({ level, msg, fields }); };
  const logger = { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return logger;
}

describe('http helpers', () => {
  let server: Listening;
  let base: string;
  const logged = recordingLogger();

  beforeAll(async () => {
    const app = express();
    app.use(requestId, apiHeaders);
    app.all('/api/echo', methodsOnly(['POST']), ...jsonBody(), (req, res) => { res.json({ got: req.body }); });
    app.all('/api/thing', methodsOnly(['GET']), (_req, res) => { res.json({ ok: true }); });
    app.get('/api/thing/:id', (req, res) => { res.json({ id: req.params.id }); });
    app.get('/api/boom', () => { throw new Error('SELECT * FROM secrets failed'); });
    app.get('/api/decode-bug', () => { decodeURIComponent('%E0'); });
    app.use('/api', apiNotFound);
    app.use(errorHandler(logged));
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.close());

  const post = (body: string, contentType = 'application/json') =>
    fetch(`${base}/api/echo`, { method: 'POST', headers: { 'Content-Type': contentType }, body });

  it('when JSON is posted, then it is parsed and the answer carries the DECISIONS 8 headers', async () => {
    const res = await post('{"a":1}');
    expect(res.status).toBe(200);
    expect((await res.json()) as unknown).toEqual({ got: { a: 1 } });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(res.headers.get('x-xss-protection')).toBe('0');
    expect(res.headers.get('permissions-policy')).toBe(PERMISSIONS_POLICY);
    expect(res.headers.get('api-version')).toBe('1.2.0');
    expect(res.headers.get('x-request-id')).toMatch(/.{8,}/);
  });

  it.each([
    ['invalid JSON', '{"a":', 'application/json', 'INVALID_JSON'],
    ['a wrong content type', '{"a":1}', 'text/plain', 'INVALID_CONTENT_TYPE'],
    ['a body over 128 KiB', JSON.stringify({ a: 'x'.repeat(1024 * 1024) }), 'application/json', 'PAYLOAD_TOO_LARGE'],
  ])('when the body is %s, then 400 with its code', async (_what, body, type, code) => {
    const res = await post(body, type);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe(code);
  });

  it('when a method is not supported, then 405 with Allow, and OPTIONS is 204 with Allow', async () => {
    const res = await fetch(`${base}/api/thing`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(((await res.json()) as { code: string }).code).toBe("METHOD_NOT_ALLOWED");
    const options = await fetch(`${base}/api/thing`, { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('when a handler throws, then 500 INTERNAL_ERROR without internals', async () => {
    const res = await fetch(`${base}/api/boom`);
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text).code).toBe('INTERNAL_ERROR');
    expect(text).not.toMatch(/SELECT|secrets|at /);
  });

  it('when a path parameter is not valid percent-encoding, then 404 NOT_FOUND, and nothing of the path is logged', async () => {
    logged.records.length = 0;
    const secret = '0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10';
    for (const bad of [`${secret}%E0`, '%ff%fe', `%c0%af${secret}`]) {
      const res = await fetch(`${base}/api/thing/${bad}`);
      expect(res.status).toBe(404);
      expect((await res.json()) as unknown).toMatchObject({ code: 'NOT_FOUND', details: { parameter: null } });
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(res.headers.get('x-xss-protection')).toBe('0');
    }
    expect(logged.records).toEqual([]);
  });

  it('when a handler of ours throws a URIError, then it stays a 500 (a bug, logged), not a 404', async () => {
    logged.records.length = 0;
    const res = await fetch(`${base}/api/decode-bug`);
    expect(res.status).toBe(500);
    expect(logged.records.map((record) => record.level)).toEqual(['error']);
  });

  it('when an unknown /api path is asked for, then 404 NOT_FOUND in the error shape', async () => {
    const res = await fetch(`${base}/api/nope`);
    expect(res.status).toBe(404);
    expect((await res.json()) as unknown).toMatchObject({ code: 'NOT_FOUND', details: { parameter: null } });
  });
});

describe('the admin app', () => {
  it('when an unknown path is asked for, then 404 NOT_FOUND in the error shape with the DECISIONS 8 headers, not a page echoing the path', async () => {
    const admin = await listen(createAdminApp({ registry: new Registry(), checks: [], isDraining: () => false, logger: silentLogger }), 0, '127.0.0.1');
    try {
      const res = await fetch(`http://127.0.0.1:${admin.port}/nope%ff<b>`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.headers.get('permissions-policy')).toBe(PERMISSIONS_POLICY);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ code: 'NOT_FOUND' });
      expect(text).not.toMatch(/nope/);
    } finally {
      await admin.close();
    }
  });
});

describe('listen with an express app', () => {
  it('when a request arrives, then its request and response are born with the app prototypes and express works as ever', async () => {
    const app = express();
    app.set('trust proxy', false);
    app.get('/api/who', (req, res) => {
      res.locals.seen = true;
      res.status(201).json({ ip: req.ip, query: req.query, secure: req.secure, locals: res.locals.seen as boolean });
    });
    const server = await listen(app, 0, '127.0.0.1');
    const born: Array<[object | null, object | null]> = [];
    // Prepended, so it runs before express could swap the prototypes itself.
    server.server.prependListener('request', (req: object, res: object) => {
      born.push([Object.getPrototypeOf(req) as object | null, Object.getPrototypeOf(res) as object | null]);
    });
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/api/who?a=1`, { headers: { 'X-Forwarded-For': '203.0.113.9' } });
      expect(res.status).toBe(201);
      expect((await res.json()) as unknown).toEqual({ ip: '127.0.0.1', query: { a: '1' }, secure: false, locals: true });
      expect(born).toEqual([[app.request, app.response]]);
    } finally {
      await server.close();
    }
  });

  it('when the handler is a plain function, then Node objects are used unchanged', async () => {
    const server = await listen((_req: never, res: never) => (res as unknown as import('node:http').ServerResponse).end('plain'), 0, '127.0.0.1');
    const born: Array<object | null> = [];
    server.server.prependListener('request', (req: object) => born.push(Object.getPrototypeOf(req) as object | null));
    try {
      const res = await fetch(`http://127.0.0.1:${server.port}/`);
      expect(await res.text()).toBe('plain');
      expect(born).toEqual([(await import('node:http')).IncomingMessage.prototype]);
    } finally {
      await server.close();
    }
  });
});

describe('appServedHere', () => {
  it('when an express app listens on loopback, then its origin names it until it closes; plain handlers are not listed', async () => {
    const app = express();
    const server = await listen(app, 0, '127.0.0.1');
    const plain = await listen((_req: never, res: never) => (res as unknown as import('node:http').ServerResponse).end(), 0, '127.0.0.1');
    expect(appServedHere(`http://127.0.0.1:${server.port}`)).toBe(app);
    expect(appServedHere(`http://127.0.0.1:${plain.port}`)).toBeUndefined();
    await server.close();
    await plain.close();
    expect(appServedHere(`http://127.0.0.1:${server.port}`)).toBeUndefined();
  });
});

describe('bodyRefusalStatus', () => {
  const parserError = (type: string, status: number) => Object.assign(new Error(type), { type, status, expose: true });

  it.each([
    ['entity.too.large', 413, 413], ['parameters.too.many', 413, 413], ['charset.unsupported', 415, 400],
    ['encoding.unsupported', 415, 400], ['entity.parse.failed', 400, 400], ['request.aborted', 400, 400],
    ['querystring.parse.rangeError', 400, 400],
  ])('when body-parser refuses with %s (%i), then a page answers %i', (type, status, expected) => {
    expect(bodyRefusalStatus(parserError(type, status))).toBe(expected);
  });

  it('when the error is a server fault (stream state, no status, a 5xx, or not a parser error at all), then it is not a refusal', () => {
    expect(bodyRefusalStatus(parserError('stream.not.readable', 500))).toBeUndefined();
    expect(bodyRefusalStatus(Object.assign(new Error('x'), { type: 'entity.too.large' }))).toBeUndefined();
    expect(bodyRefusalStatus(new Error('boom'))).toBeUndefined();
    expect(bodyRefusalStatus(undefined)).toBeUndefined();
  });
});

import { Agent, get } from 'node:http';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { PERMISSIONS_POLICY } from '@vanish/common';
import { checkApiAnswer } from '@vanish/testkit/openapi';
import { startGateway, type RunningGateway } from './support/gateway-harness';
import { send, type Answer } from './support/http-client';
import { TestUpstreams, type UpstreamMode } from './support/test-upstream';

const NOTE = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';
const json = { 'Content-Type': 'application/json' };

function expectErrorShape(answer: Answer, status: number, code: string): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.json()).toEqual({ error: expect.any(String), code, details: { parameter: null, message: expect.any(String) } });
}

function expectBaseHeaders(answer: Answer): void {
  expect(answer.headers['cache-control']).toBe('no-store');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.headers['referrer-policy']).toBe('no-referrer');
  expect(answer.headers['cross-origin-opener-policy']).toBe('same-origin');
  expect(answer.headers['cross-origin-resource-policy']).toBe('same-origin');
  expect(answer.headers['x-xss-protection']).toBe('0');
  expect(answer.headers['permissions-policy']).toBe(PERMISSIONS_POLICY);
  expect(answer.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{8,128}$/);
}

function expectApiHeaders(answer: Answer): void {
  expectBaseHeaders(answer);
  expect(answer.headers['api-version']).toBe('1.2.0');
}

function expectPageHeaders(answer: Answer): void {
  expectBaseHeaders(answer);
  expect(answer.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
  expect(answer.headers['x-frame-options']).toBe('DENY');
}

/** A chunked body of `total` bytes, produced lazily (never held in memory at once). */
function chunkedBody(total: number, chunkSize = 64 * 1024): Readable {
  let sent = 0;
  const chunk = Buffer.alloc(chunkSize, 0x61);
  return new Readable({
    read() {
      if (sent >= total) {
        this.push(null);
        return;
      }
      const size = Math.min(chunkSize, total - sent);
      sent += size;
      this.push(size === chunkSize ? chunk : chunk.subarray(0, size));
    },
  });
}

// The same behaviour twice: relayed over a socket (separate services) and handed to the upstream's
// listener in process (the all-in-one's InProcessDispatcher): one door, one relay, either transport.
describe.each([
  ['relayed over a socket', false],
  ['handed over in process', true],
] as const)('gateway HTTP behaviour, %s (routing, errors, headers, bodies, upstream failures)', (_transport, inProcess) => {
  const upstreams = new TestUpstreams();
  const overrides = inProcess ? { localUpstreams: upstreams.inProcess } : {};
  const { notes, stats } = upstreams;
  let gw: RunningGateway;

  beforeAll(async () => {
    await upstreams.start();
    gw = await startGateway({
      ...upstreams.env,
      UPSTREAM_TIMEOUT_MS: '700',
      RATE_LIMIT_CREATE_PER_HOUR: '1000',
      RATE_LIMIT_VIEW_PER_HOUR: '1000',
      RATE_LIMIT_STATS_PER_HOUR: '1000',
    }, overrides);
  });

  afterAll(async () => {
    await gw.stop();
    await upstreams.stop();
  });

  beforeEach(() => {
    notes.mode = 'ok';
    notes.seen.length = 0;
  });

  describe('routing', () => {
    it.each([
      ['POST', '/api/create.php', 'notes'],
      ['GET', `/api/view/${NOTE}.php`, 'notes'],
      ['GET', '/api/stats.php', 'stats'],
      ['GET', '/api/openapi.json', 'notes'],
      ['GET', '/', 'notes'],
      ['POST', '/', 'notes'],
      ['GET', `/${NOTE}`, 'notes'],
      ['POST', `/${NOTE}`, 'notes'],
      ['GET', '/assets/app.css', 'notes'],
      ['GET', '/unsubscribe/some-token', 'mailer'],
      ['POST', '/unsubscribe/some-token', 'mailer'],
    ])('when %s %s, then it reaches %s', async (method, path, upstream) => {
      const answer = await send(`${gw.url}${path}`, { method, headers: json, body: method === 'POST' ? '{"content":"x"}' : undefined });
      expect(answer.status).toBe(200);
      expect(answer.json().upstream).toBe(upstream);
    });

    it('when a request carries a sane X-Request-Id, then the upstream and the answer get the same id; otherwise one is made', async () => {
      const kept = await send(`${gw.url}/api/openapi.json`, { headers: { 'X-Request-Id': 'abc-123-def-456' } });
      expect(kept.headers['x-request-id']).toBe('abc-123-def-456');
      expect(notes.seen.at(-1)?.headers['x-request-id']).toBe('abc-123-def-456');
      const replaced = await send(`${gw.url}/api/openapi.json`, { headers: { 'X-Request-Id': 'bad id\twith spaces' } });
      expect(replaced.headers['x-request-id']).toMatch(/^[A-Za-z0-9_-]{16}$/);
      expect(notes.seen.at(-1)?.headers['x-request-id']).toBe(replaced.headers['x-request-id']);
    });

    it('when a client sends its own X-Forwarded-For, then the upstream sees only the address the gateway saw', async () => {
      await send(`${gw.url}/api/openapi.json`, { headers: { 'X-Forwarded-For': '6.6.6.6' } });
      expect(notes.seen.at(-1)?.headers['x-forwarded-for']).toBe('127.0.0.1');
      expect(notes.seen.at(-1)?.headers['x-forwarded-proto']).toBe('http');
    });
  });

  describe('answers of the gateway itself', () => {
    it('when an /api path is unknown, then 404 NOT_FOUND in the error shape with the API headers', async () => {
      for (const path of ['/api/delete.php', '/api', `/api/view/${NOTE}`]) {
        const answer = await send(`${gw.url}${path}`);
        expectErrorShape(answer, 404, 'NOT_FOUND');
        expectApiHeaders(answer);
      }
      expect(notes.seen).toHaveLength(0);
    });

    it('when the gateway refuses a request without a body, then the keep-alive connection stays open', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const connection = await new Promise<string | undefined>((resolve, reject) => {
          get(`${gw.url}/api/nothing.php`, { agent }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.headers.connection));
          }).on('error', reject);
        });
        expect(connection).toBe('keep-alive');
      } finally {
        agent.destroy();
      }
    });

    it('when a method is not supported, then 405 METHOD_NOT_ALLOWED with Allow', async () => {
      const answer = await send(`${gw.url}/api/create.php`, { method: 'GET' });
      expectErrorShape(answer, 405, 'METHOD_NOT_ALLOWED');
      expect(answer.headers.allow).toBe('POST, OPTIONS');
      expectApiHeaders(answer);
      const del = await send(`${gw.url}/api/view/${NOTE}.php`, { method: 'DELETE' });
      expectErrorShape(del, 405, 'METHOD_NOT_ALLOWED');
      expect(del.headers.allow).toBe('GET, HEAD, OPTIONS');
      const page = await send(`${gw.url}/${NOTE}`, { method: 'PUT', headers: { Accept: 'application/json' } });
      expectErrorShape(page, 405, 'METHOD_NOT_ALLOWED');
      expectPageHeaders(page);
      expect(notes.seen).toHaveLength(0);
    });

    it('when OPTIONS, then 204 with Allow and no body, never 405', async () => {
      const answer = await send(`${gw.url}/api/stats.php`, { method: 'OPTIONS' });
      expect(answer.status).toBe(204);
      expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS');
      expect(answer.text).toBe('');
      expectApiHeaders(answer);
      expect((await send(`${gw.url}/`, { method: 'OPTIONS' })).headers.allow).toBe('GET, HEAD, POST, OPTIONS');
    });

    it('when CORS_ORIGINS is unset, then no CORS header is ever sent', async () => {
      const answer = await send(`${gw.url}/api/stats.php`, { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' } });
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('when a browser page asks for HTML, then gateway errors come as a small page with the page headers', async () => {
      const answer = await send(`${gw.url}/a/b`, { headers: { Accept: 'text/html' } });
      expect(answer.status).toBe(404);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expectPageHeaders(answer);
      expect(answer.text).toContain('<html lang="en" dir="ltr">');
    });

    it('when the reader chose Arabic and a dark theme on the pages, then the gateway\'s own page follows both; Accept-Language otherwise', async () => {
      const chosen = await send(`${gw.url}/a/b`, { headers: { Accept: 'text/html', Cookie: 'lang=ar; theme=dark', 'Accept-Language': 'de' } });
      expect(chosen.status).toBe(404);
      expect(chosen.text).toContain('<html lang="ar" dir="rtl" data-theme="dark">');
      expect(chosen.headers.vary).toMatch(/Cookie/);
      const accepted = await send(`${gw.url}/a/b`, { headers: { Accept: 'text/html', 'Accept-Language': 'fr-CA,fr;q=0.8' } });
      expect(accepted.text).toContain('<h1>Page introuvable</h1>');
      const api = await send(`${gw.url}/api/nope`, { headers: { Cookie: 'lang=ar', 'Accept-Language': 'de' } });
      expect(JSON.parse(api.text)).toMatchObject({ code: 'NOT_FOUND', error: 'No such API endpoint' });
    });
  });

  describe('answers relayed from upstreams', () => {
    it('when an upstream answers, then DECISIONS 8 headers are enforced and its X-Powered-By is dropped', async () => {
      const api = await send(`${gw.url}/api/stats.php`);
      expectApiHeaders(api);
      expect(api.headers['x-powered-by']).toBeUndefined();
      expect(api.headers['ratelimit-limit']).toBe('1000');
      const page = await send(`${gw.url}/${NOTE}`);
      expectPageHeaders(page);
      expect(page.headers['cache-control']).toBe('no-store');
    });

    it('when an upstream sends headers the gateway sets itself, then the gateway\'s stay; only a page\'s own CSP stands, and Vary passes', async () => {
      notes.mode = 'own-headers';
      const api = await send(`${gw.url}/api/view/${NOTE}.php`);
      expectApiHeaders(api);
      expect(api.headers['referrer-policy']).toBe('no-referrer');
      expect(api.headers['ratelimit-remaining']).not.toBe('123456');
      expect(api.headers.vary).toBe('Accept-Language');
      const page = await send(`${gw.url}/${NOTE}`);
      expectPageHeaders(page);
      expect(page.headers['content-security-policy']).toBe("default-src 'none'; img-src 'self'; frame-ancestors 'none'");
      expect(page.headers['x-frame-options']).toBe('DENY');
    });

    it('when the request\'s embedded form or its script is relayed, then only the form lacks X-Frame-Options (its CSP decides, none by default) and only the script is for other sites (DECISIONS 15)', async () => {
      notes.mode = 'ok';
      const id = 'Q'.repeat(43);
      const form = await send(`${gw.url}/embed/q/${id}`);
      expect(form.headers['x-frame-options']).toBeUndefined();
      expect(form.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(form.headers['cross-origin-resource-policy']).toBe('same-origin');
      for (const path of [`/q/${id}`, `/i/${id}`, '/request', '/assets/app.js']) expectPageHeaders(await send(`${gw.url}${path}`));
      const script = await send(`${gw.url}/assets/embed.js`);
      expect([script.headers['cross-origin-resource-policy'], script.headers['access-control-allow-origin'], script.headers['x-frame-options']]).toEqual(['cross-origin', '*', 'DENY']);
    });

    it('when HEAD is sent where GET works, then it is relayed', async () => {
      const answer = await send(`${gw.url}/api/view/${NOTE}.php`, { method: 'HEAD' });
      expect(answer.status).toBe(200);
      expect(notes.seen.at(-1)?.method).toBe('HEAD');
    });

    it('when an upstream answers a 5xx that is not our error shape, then it is replaced and no stack leaks', async () => {
      notes.mode = 'html-500';
      const answer = await send(`${gw.url}/api/view/${NOTE}.php`);
      expectErrorShape(answer, 500, 'INTERNAL_ERROR');
      expect(answer.text).not.toMatch(/secret\.js|TypeError/);
      expectApiHeaders(answer);
    });

    it('when an upstream 5xx is in our shape with extra fields, then the shape passes and the extras do not', async () => {
      notes.mode = 'stack-500';
      const answer = await send(`${gw.url}/api/view/${NOTE}.php`);
      expectErrorShape(answer, 500, 'INTERNAL_ERROR');
      expect(answer.text).not.toMatch(/stack|secret/);
      notes.mode = 'shaped-503';
      const unavailable = await send(`${gw.url}/api/view/${NOTE}.php`);
      expectErrorShape(unavailable, 503, 'SERVICE_UNAVAILABLE');
      expect(unavailable.headers['retry-after']).toBe('7');
    });

    it('when an upstream repeats a header, then one that may appear once keeps its first value and others are joined, as node:http reads them', async () => {
      notes.mode = 'repeated-headers';
      const answer = await send(`${gw.url}/api/view/${NOTE}.php`);
      expect(answer.status).toBe(200);
      const lines = (name: string): string[] => {
        const values: string[] = [];
        for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) if (answer.rawHeaders[i]!.toLowerCase() === name) values.push(answer.rawHeaders[i + 1]!);
        return values;
      };
      expect(lines('content-type')).toEqual(['application/json']);
      expect(lines('x-upstream-tag')).toEqual(['one, two']);
      notes.mode = 'repeated-retry-after-503';
      const unavailable = await send(`${gw.url}/api/view/${NOTE}.php`);
      expectErrorShape(unavailable, 503, 'SERVICE_UNAVAILABLE');
      expect(unavailable.headers['retry-after']).toBe('7');
    });

    it('when an upstream 5xx in our shape answers a browser on a web route, then the browser gets the gateway\'s page for it, in its language, with the same Retry-After', async () => {
      notes.mode = 'shaped-503';
      const page = await send(`${gw.url}/${NOTE}`, { headers: { Accept: 'text/html', 'Accept-Language': 'ja' } });
      expect(page.status).toBe(503);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.headers['retry-after']).toBe('7');
      expect(page.text).toContain('<html lang="ja" dir="ltr">');
      expect(page.text).toContain('SERVICE_UNAVAILABLE');
      expectPageHeaders(page);
    });

    /** The upstream in `mode` is given up at UPSTREAM_TIMEOUT_MS (700 ms here): 504 in the error shape, well within 3 s. */
    async function expectTimedOut(mode: UpstreamMode): Promise<void> {
      notes.mode = mode;
      const started = Date.now();
      const answer = await send(`${gw.url}/api/view/${NOTE}.php`, { timeoutMs: 5000 });
      expect(Date.now() - started).toBeLessThan(3000);
      expectErrorShape(answer, 504, 'UPSTREAM_TIMEOUT');
      expectApiHeaders(answer);
    }

    it('when the upstream does not answer in time, then 504 UPSTREAM_TIMEOUT within the timeout', async () => {
      await expectTimedOut('hang');
    });

    it('when an upstream sends a 5xx\'s headers and then stalls in its body, then 504 UPSTREAM_TIMEOUT within the timeout, and the next request is answered', async () => {
      await expectTimedOut('stalled-503');
      notes.mode = 'ok';
      expect((await send(`${gw.url}/api/view/${NOTE}.php`)).status).toBe(200);
    });

    it('when an upstream sends a 200\'s headers and part of its body and then stalls, then the client\'s answer is cut within the timeout, and the next request is answered', async () => {
      notes.mode = 'stalled-200';
      const started = Date.now();
      // The status and headers were relayed already; what is left is to end the connection, not to wait without end.
      await expect(send(`${gw.url}/api/view/${NOTE}.php`, { timeoutMs: 5000 })).rejects.toThrow(/aborted|socket hang up|ECONNRESET/);
      expect(Date.now() - started).toBeLessThan(3000);
      notes.mode = 'ok';
      expect((await send(`${gw.url}/api/view/${NOTE}.php`)).status).toBe(200);
    });

    it('when the upstream is stopped, then 502 UPSTREAM_UNAVAILABLE; started again, traffic flows', async () => {
      await notes.stop();
      try {
        const down = await send(`${gw.url}/api/view/${NOTE}.php`, { timeoutMs: 5000 });
        expectErrorShape(down, 502, 'UPSTREAM_UNAVAILABLE');
        expectApiHeaders(down);
        const page = await send(`${gw.url}/${NOTE}`, { headers: { Accept: 'application/json' } });
        expectErrorShape(page, 502, 'UPSTREAM_UNAVAILABLE');
        expectPageHeaders(page);
        // The gateway stays ready: its readiness never depends on the services behind it.
        expect((await send(`${gw.adminUrl}/readyz`)).status).toBe(200);
      } finally {
        await notes.start();
      }
      const up = await send(`${gw.url}/api/view/${NOTE}.php`);
      expect(up.status).toBe(200);
    });
  });

  describe('transport', () => {
    it(inProcess
      ? 'when handed over in process, then the upstream\'s port accepts no connection at all'
      : 'when relayed over a socket, then kept-alive connections to the upstream\'s port carry the requests', async () => {
      const before = notes.connections;
      for (let i = 0; i < 5; i += 1) expect((await send(`${gw.url}/api/view/${NOTE}.php`)).status).toBe(200);
      if (inProcess) expect(notes.connections).toBe(before);
      else expect(notes.connections - before).toBeLessThanOrEqual(1);
    });
  });

  describe('request bodies', () => {
    it('when a body of 120,000 bytes is sent, with a length or chunked, then the upstream receives exactly those bytes', async () => {
      // About DECISIONS 4's largest valid body (10,000 code points as escaped surrogate pairs).
      const body = Buffer.from(`{"content":"${'\\ud83d\\ude00'.repeat(5_000)}${'\\u00e9'.repeat(9_998)}"}`);
      expect(body.length).toBe(120_002);
      const withLength = await send(`${gw.url}/api/create.php`, { method: 'POST', headers: json, body });
      expect(withLength.status).toBe(200);
      expect(notes.seen.at(-1)?.body.equals(body)).toBe(true);
      const chunked = await send(`${gw.url}/api/create.php`, { method: 'POST', headers: json, body: Readable.from([body.subarray(0, 50_000), body.subarray(50_000)]) });
      expect(chunked.status).toBe(200);
      expect(notes.seen.at(-1)?.body.equals(body)).toBe(true);
      expect(notes.seen.at(-1)?.headers['content-length']).toBe('120002');
      expect(notes.seen.at(-1)?.headers['transfer-encoding']).toBeUndefined();
    });

    it('when a client asks for 100-continue, then it gets it from the gateway and the upstream gets the body without the expectation', async () => {
      const body = Buffer.from('{"content":"hello"}');
      const answer = await send(`${gw.url}/api/create.php`, { method: 'POST', headers: { ...json, Expect: '100-continue' }, body });
      expect(answer.status).toBe(200);
      expect(notes.seen.at(-1)?.body.equals(body)).toBe(true);
      expect(notes.seen.at(-1)?.headers.expect).toBeUndefined();
    });

    it('when five 10 MB chunked bodies are sent at once, then each gets 400 PAYLOAD_TOO_LARGE, nothing reaches the upstream, and memory stays flat', async () => {
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      gc();
      const used = (): number => {
        const usage = process.memoryUsage();
        return usage.heapUsed + usage.arrayBuffers;
      };
      const baseline = used();
      let peak = baseline;
      // Live memory only: collect before each sample, so lazily freed garbage does not count.
      const sampler = setInterval(() => {
        gc();
        peak = Math.max(peak, used());
      }, 10);
      try {
        const answers = await Promise.all(
          Array.from({ length: 5 }, () => send(`${gw.url}/api/create.php`, { method: 'POST', headers: json, body: chunkedBody(10 * 1024 * 1024) })),
        );
        for (const answer of answers) {
          expectErrorShape(answer, 400, 'PAYLOAD_TOO_LARGE');
          expectApiHeaders(answer);
        }
      } finally {
        clearInterval(sampler);
      }
      expect(notes.seen).toHaveLength(0);
      // 50 MB passed through at once; a gateway that held bodies would keep up to 50 MB alive.
      expect(peak - baseline).toBeLessThan(12 * 1024 * 1024);
      // 50 MB over loopback with a full collection every 10 ms: over jest's 5 s on a loaded machine.
    }, 30_000);

    it('when a body announces more than 128 KiB, then 400 PAYLOAD_TOO_LARGE', async () => {
      const answer = await send(`${gw.url}/api/create.php`, { method: 'POST', headers: json, body: Buffer.alloc(200 * 1024, 0x20) });
      expectErrorShape(answer, 400, 'PAYLOAD_TOO_LARGE');
    });

    it('when a gzip bomb is sent, then 400 INVALID_CONTENT_TYPE without inflating it', async () => {
      const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024, 0x20));
      expect(bomb.length).toBeLessThan(128 * 1024);
      const answer = await send(`${gw.url}/api/create.php`, { method: 'POST', headers: { ...json, 'Content-Encoding': 'gzip' }, body: bomb });
      expectErrorShape(answer, 400, 'INVALID_CONTENT_TYPE');
      expect(notes.seen).toHaveLength(0);
    });
  });

  describe('contract', () => {
    it('when the gateway answers by itself or rewrites an answer, then the OpenAPI document describes the answer', async () => {
      const check = async (method: string, path: string, options: Parameters<typeof send>[1] = {}): Promise<void> => {
        const answer = await send(`${gw.url}${path}`, { method, ...options });
        checkApiAnswer({ method, path, status: answer.status, headers: answer.headers, body: answer.text === '' ? undefined : answer.json() });
      };
      await check('GET', '/api/create.php');
      await check('DELETE', `/api/view/${NOTE}.php`);
      await check('OPTIONS', '/api/stats.php');
      await check('POST', '/api/create.php', { headers: { ...json, 'Content-Encoding': 'gzip' }, body: gzipSync('{}') });
      await check('POST', '/api/create.php', { headers: json, body: Buffer.alloc(200 * 1024, 0x20) });
      notes.mode = 'html-500';
      await check('GET', `/api/view/${NOTE}.php`);
      notes.mode = 'shaped-503';
      await check('GET', `/api/view/${NOTE}.php`);
      notes.mode = 'hang';
      await check('GET', `/api/view/${NOTE}.php`);
      notes.mode = 'ok';
      await notes.stop();
      try {
        await check('POST', '/api/create.php', { headers: json, body: '{"content":"x"}' });
      } finally {
        await notes.start();
      }
      const strict = await startGateway({ NOTES_URL: notes.url, STATS_URL: stats.url, RATE_LIMIT_STATS_PER_HOUR: '1', REQUIRE_HTTPS: 'false' }, overrides);
      try {
        await send(`${strict.url}/api/stats.php`);
        const limited = await send(`${strict.url}/api/stats.php`);
        expect(limited.status).toBe(429);
        checkApiAnswer({ method: 'GET', path: '/api/stats.php', status: 429, headers: limited.headers, body: limited.json() });
      } finally {
        await strict.stop();
      }
    });
  });

  describe('logs and metrics', () => {
    it('when notes are viewed by uuid on every route, then the uuid never appears in the logs, and each request is one JSON line', async () => {
      await send(`${gw.url}/api/view/${NOTE}.php?x=${NOTE}`);
      await send(`${gw.url}/${NOTE}`, { method: 'POST', headers: json, body: JSON.stringify({ passcode: 'secret-pass' }) });
      await send(`${gw.url}/api/view/${NOTE.toUpperCase()}`);
      await send(`${gw.url}/unsubscribe/unsub-token-value`);
      notes.mode = 'hang';
      await send(`${gw.url}/${NOTE}`);
      const text = gw.logs.text();
      expect(text).not.toContain(NOTE);
      expect(text.toLowerCase()).not.toContain(NOTE);
      expect(text).not.toContain('secret-pass');
      expect(text).not.toContain('unsub-token-value');
      const requests = gw.logs.entries().filter((entry) => entry.msg === 'request');
      expect(requests.some((entry) => entry.path === '/api/view/:uuid.php' && entry.route === '/api/view/:uuid.php')).toBe(true);
      expect(requests.some((entry) => entry.path === '/:uuid' && entry.status === 504)).toBe(true);
      expect(requests.every((entry) => typeof entry.requestId === 'string' && typeof entry.durationMs === 'number')).toBe(true);
    });

    it('when metrics are scraped, then routes appear as templates only', async () => {
      await send(`${gw.url}/api/view/${NOTE}.php`);
      const metrics = (await send(`${gw.adminUrl}/metrics`)).text;
      expect(metrics).toMatch(/gateway_http_request_duration_seconds_count\{[^}]*route="\/api\/view\/:uuid.php"/);
      expect(metrics).toContain('gateway_rate_limited_total');
      expect(metrics).toContain('gateway_limiter_store_up');
      expect(metrics).not.toContain(NOTE);
      expect((await send(`${gw.adminUrl}/healthz`)).status).toBe(200);
    });
  });
});

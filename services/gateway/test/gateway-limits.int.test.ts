import { requireService } from '@vanish/testkit/services';
import { deriveClientKey } from '../src';
import { startGateway, testPrefix, TEST_LIMITER_KEY, type RunningGateway } from './support/gateway-harness';
import { send } from './support/http-client';
import { deleteKeysWithPrefix, readCounter } from './support/redis-keys';
import { TestUpstream } from './support/test-upstream';

const NOTE = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';
const json = { 'Content-Type': 'application/json' };
const createBody = JSON.stringify({ content: 'hello' });

describe('gateway rate limits on the real Redis', () => {
  const notes = new TestUpstream('notes');
  const stats = new TestUpstream('stats');
  const mailer = new TestUpstream('mailer');
  const prefixes: string[] = [];
  const gateways: RunningGateway[] = [];

  const gateway = async (env: Record<string, string> = {}, prefix = testPrefix('limits')): Promise<RunningGateway> => {
    prefixes.push(prefix);
    const running = await startGateway({
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMIT_KEY_PREFIX: prefix,
      NOTES_URL: notes.url,
      STATS_URL: stats.url,
      MAILER_URL: mailer.url,
      ...env,
    });
    gateways.push(running);
    return running;
  };

  const create = (gw: RunningGateway, localAddress = '127.0.0.1') =>
    send(`${gw.url}/api/create.php`, { method: 'POST', headers: json, body: createBody, localAddress });

  beforeAll(async () => {
    await requireService('redis');
    await Promise.all([notes.start(), stats.start(), mailer.start()]);
  });

  afterAll(async () => {
    await Promise.all(gateways.map((gw) => gw.stop()));
    await Promise.all([notes.stop(), stats.stop(), mailer.stop()]);
    await Promise.all(prefixes.map((prefix) => deleteKeysWithPrefix(prefix)));
  });

  it('when one address sends 11 creates, then the 11th is 429 RATE_LIMITED with Retry-After, and another address is unaffected', async () => {
    const gw = await gateway();
    for (let i = 1; i <= 10; i += 1) {
      const answer = await create(gw);
      expect(answer.status).toBe(200);
      expect(answer.headers['ratelimit-limit']).toBe('10');
      expect(answer.headers['ratelimit-remaining']).toBe(String(10 - i));
      expect(Number(answer.headers['ratelimit-reset'])).toBeGreaterThan(3500);
    }
    const refused = await create(gw);
    expect(refused.status).toBe(429);
    expect(refused.json()).toEqual({
      error: expect.any(String),
      code: 'RATE_LIMITED',
      details: { parameter: null, message: expect.any(String) },
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['api-version']).toBe('1.2.0');
    expect(refused.headers['cache-control']).toBe('no-store');

    // The create form on the web page spends the same budget (DECISIONS 5); a browser gets a page.
    const form = await send(`${gw.url}/`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/html' }, body: 'content=x' });
    expect(form.status).toBe(429);
    expect(form.headers['content-type']).toMatch(/^text\/html/);
    expect(form.headers['retry-after']).toBeDefined();
    expect(form.headers['x-frame-options']).toBe('DENY');

    const other = await create(gw, '127.0.0.2');
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('9');
  });

  it('when the window passes, then the address may create again, and refused requests did not extend the window', async () => {
    const gw = await gateway({ RATE_LIMIT_WINDOW_SECONDS: '2', RATE_LIMIT_CREATE_PER_HOUR: '3' });
    const started = Date.now();
    for (let i = 0; i < 3; i += 1) expect((await create(gw)).status).toBe(200);
    // Keep knocking while refused, for most of the window.
    while (Date.now() - started < 1500) {
      expect((await create(gw)).status).toBe(429);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 2300 - Date.now())));
    expect((await create(gw)).status).toBe(200);
  });

  it('when one address views 50 times (API, note page and reveal alike), then the 51st view is 429', async () => {
    const gw = await gateway();
    for (let i = 0; i < 50; i += 1) {
      const path = i % 3 === 0 ? `/api/view/${NOTE}.php` : i % 3 === 1 ? `/${NOTE}` : `/${NOTE}`;
      const method = i % 3 === 2 ? 'HEAD' : 'GET';
      const answer = await send(`${gw.url}${path}`, { method });
      expect(answer.status).toBe(200);
      expect(answer.headers['ratelimit-limit']).toBe('50');
    }
    const refused = await send(`${gw.url}/${NOTE}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'passcode=' });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    // Creating is a different budget.
    expect((await create(gw)).status).toBe(200);
  });

  it('when one address reads receipts (page, JSON, end-now form) and notes, then they share the view budget; the receipt keys are not limited (DECISIONS 5, 12)', async () => {
    const gw = await gateway({ RATE_LIMIT_VIEW_PER_HOUR: '4' });
    const receipt = 'R'.repeat(43);
    expect((await send(`${gw.url}/r/${receipt}`)).status).toBe(200);
    expect((await send(`${gw.url}/api/receipt/${receipt}.php`, { method: 'HEAD' })).status).toBe(200);
    expect((await send(`${gw.url}/${NOTE}`)).status).toBe(200);
    const last = await send(`${gw.url}/r/${receipt}`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'form_token=x' });
    expect(last.status).toBe(200);
    expect(last.headers['ratelimit-remaining']).toBe('0');
    const refused = await send(`${gw.url}/api/receipt/${receipt}.php`);
    expect(refused.status).toBe(429);
    expect(refused.json().code).toBe('RATE_LIMITED');
    for (let i = 0; i < 3; i += 1) {
      const keys = await send(`${gw.url}/.well-known/vanish-receipt-keys.json`);
      expect(keys.status).toBe(200);
      expect(keys.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  it('when one address asks for stats 21 times, then the 21st is 429', async () => {
    const gw = await gateway();
    for (let i = 0; i < 20; i += 1) expect((await send(`${gw.url}/api/stats.php`)).status).toBe(200);
    const refused = await send(`${gw.url}/api/stats.php`);
    expect(refused.status).toBe(429);
    expect(refused.json().code).toBe('RATE_LIMITED');
  });

  it('when two gateways share one Redis, then they share the counts', async () => {
    const prefix = testPrefix('shared');
    const a = await gateway({}, prefix);
    const b = await gateway({}, prefix);
    for (let i = 0; i < 10; i += 1) expect((await create(i % 2 === 0 ? a : b)).status).toBe(200);
    expect((await create(a)).status).toBe(429);
    expect((await create(b)).status).toBe(429);
    const key = `${prefix}:create:${deriveClientKey(Buffer.from(TEST_LIMITER_KEY, 'base64'), '127.0.0.1')}`;
    expect(await readCounter(key)).toBeGreaterThanOrEqual(11);
  });

  it('when the OpenAPI document or the create page is fetched, then no limit applies', async () => {
    const gw = await gateway({ RATE_LIMIT_VIEW_PER_HOUR: '1', RATE_LIMIT_CREATE_PER_HOUR: '1' });
    for (let i = 0; i < 3; i += 1) {
      const doc = await send(`${gw.url}/api/openapi.json`);
      expect(doc.status).toBe(200);
      expect(doc.headers['ratelimit-limit']).toBeUndefined();
      expect((await send(`${gw.url}/`)).status).toBe(200);
      expect((await send(`${gw.url}/assets/app.css`)).status).toBe(200);
    }
  });
});

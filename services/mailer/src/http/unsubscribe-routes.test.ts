import express from 'express';
import { listen, type Listening } from '@vanish/common';
import type { UnsubscribeService } from '../domain/unsubscribe-service';
import { unsubscribeRoutes } from './unsubscribe-routes';

/** The unsubscribe pages speak the reader's language too (issue 20): the pages' cookie, else Accept-Language. */
describe('unsubscribe pages in the reader\'s language', () => {
  let server: Listening;
  let base: string;

  beforeAll(async () => {
    // A fake service: the tokens' cryptography is tested in unsubscribe-tokens.test.ts.
    const service = { isValid: (token: string) => token === 'good', unsubscribe: async (token: string) => token === 'good' } as unknown as UnsubscribeService;
    const app = express();
    app.use(unsubscribeRoutes(service));
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.port}`;
  });
  afterAll(async () => { await server.close(); });

  const get = async (path: string, headers: Record<string, string> = {}, method = 'GET') => {
    const res = await fetch(`${base}${path}`, { method, headers });
    return { status: res.status, vary: res.headers.get('vary'), body: await res.text() };
  };

  it('when nothing says otherwise, then the page is the English one it was', async () => {
    const page = await get('/unsubscribe/good');
    expect(page.body).toContain('<html lang="en" dir="ltr">');
    expect(page.body).toContain('<button type="submit">Unsubscribe</button>');
    expect(page.vary).toMatch(/Cookie/);
  });

  it('when the browser asks for German, or the pages\' cookie says Arabic, then the page is in that language', async () => {
    expect((await get('/unsubscribe/good', { 'accept-language': 'de-DE,de;q=0.9' })).body).toContain('<button type="submit">Abmelden</button>');
    const arabic = await get('/unsubscribe/nope', { cookie: 'theme=dark; lang=ar', 'accept-language': 'de' });
    expect(arabic.status).toBe(404);
    expect(arabic.body).toContain('<html lang="ar" dir="rtl" data-theme="dark">');
    expect(arabic.body).toContain('<link rel="stylesheet" href="/assets/app.css">');
    expect(arabic.body).toContain('الرابط غير صالح');
    const done = await get('/unsubscribe/good', { cookie: 'lang=ja' }, 'POST');
    expect(done.body).toContain('配信を停止しました');
    expect((await get('/unsubscribe/good', { cookie: 'lang="><script>' })).body).toContain('<html lang="en" dir="ltr">');
  });
});

import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { bodyGuard, cutUnfinishedBodies } from '../src/http/body-guard';
import { sendError } from '../src/http/send-error';

// The gateway's public listener has no whole-request timeout (file uploads have an idle timeout
// instead): the body guard gives every other body a deadline of its own (30 s; 400 ms here).
describe('body guard deadline', () => {
  it('when a JSON body has not arrived by the deadline, then the answer is 408 in the error shape; a prompt body passes', async () => {
    const app = express();
    app.use(bodyGuard(1024, 400));
    app.post('/', (_req, res) => { res.json({ ok: true }); });
    app.use((err: unknown, req: express.Request, res: express.Response, _next: express.NextFunction) => sendError(req, res, err));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as AddressInfo).port;
    const post = (finish: boolean) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'Content-Type': 'application/json', 'Content-Length': '19' } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.write('{"content":');
      if (finish) req.end('"hello"}');
    });
    try {
      const slow = await post(false);
      expect(slow.status).toBe(408);
      expect(JSON.parse(slow.body)).toMatchObject({ code: 'REQUEST_TIMEOUT', details: { parameter: null } });
      await expect(post(true)).resolves.toEqual({ status: 200, body: '{"ok":true}' });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('cutUnfinishedBodies (the backstop for early answers)', () => {
  it('when an answer comes early and the body keeps dripping, then the connection is closed at the deadline', async () => {
    const app = express();
    app.use(cutUnfinishedBodies(400, (res) => res.locals.exempt === true));
    app.options('/', (_req, res) => { res.status(204).end(); });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const closedAfter = await new Promise<number>((resolve, reject) => {
        const started = Date.now();
        const req = request({ host: '127.0.0.1', port, method: 'OPTIONS', path: '/', headers: { 'Content-Length': '1000000' } }, (res) => res.resume());
        req.on('error', () => resolve(Date.now() - started));
        req.on('close', () => resolve(Date.now() - started));
        const drip = setInterval(() => { if (!req.destroyed) req.write('x'); else clearInterval(drip); }, 50);
        setTimeout(() => { clearInterval(drip); reject(new Error('not closed within 10 s')); }, 10_000);
      });
      expect(closedAfter).toBeGreaterThanOrEqual(350);
      expect(closedAfter).toBeLessThan(10_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('when a request announces no body, then it gets no deadline (nothing can drip); one that announces a body does', async () => {
    const app = express();
    app.use(cutUnfinishedBodies(400));
    app.use((req, res) => { res.json({ watched: req.listenerCount('end') > 0 }); });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const port = (server.address() as AddressInfo).port;
    const ask = (method: string, body?: string) => new Promise<unknown>((resolve, reject) => {
      const headers = body === undefined ? {} : { 'Content-Length': String(body.length) };
      const req = request({ host: '127.0.0.1', port, method, path: '/', headers }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => { text += c.toString(); });
        res.on('end', () => {
          req.destroy();
          resolve(JSON.parse(text));
        });
      });
      req.on('error', reject);
      if (body === undefined) req.end();
      else req.write(body); // not ended: the body is still arriving when the answer is made
    });
    try {
      await expect(ask('GET')).resolves.toEqual({ watched: false });
      await expect(ask('POST', '{"a":1}')).resolves.toEqual({ watched: true });
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

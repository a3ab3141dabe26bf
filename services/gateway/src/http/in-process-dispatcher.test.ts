import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import express from 'express';
import type { Dispatcher } from 'undici';
import { InProcessDispatcher, type LocalApp } from './in-process-dispatcher';

const ORIGIN = 'http://127.0.0.1:18081';

/** Records what the relay would be told; pauses after each chunk when `pauseEvery` says so. */
function recorder(options: { pauseAfterBytes?: number } = {}) {
  let resolveEnd!: () => void;
  let rejectEnd!: (err: Error) => void;
  const ended = new Promise<void>((resolve, reject) => {
    resolveEnd = resolve;
    rejectEnd = reject;
  });
  const seen = { status: 0, headers: {} as IncomingHttpHeaders, bytes: 0, chunks: [] as Buffer[], paused: 0, controller: undefined as undefined | { pause(): void; resume(): void; abort(err: Error): void } };
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart(controller) {
      seen.controller = controller as never;
    },
    onResponseStart(_controller, status, headers) {
      seen.status = status;
      seen.headers = headers as IncomingHttpHeaders;
    },
    onResponseData(controller, chunk) {
      seen.bytes += chunk.length;
      if (seen.chunks.length < 4) seen.chunks.push(chunk);
      if (options.pauseAfterBytes !== undefined && seen.bytes >= options.pauseAfterBytes && seen.paused === 0) {
        seen.paused += 1;
        controller.pause();
      }
    },
    onResponseEnd() {
      resolveEnd();
    },
    onResponseError(_controller, err) {
      rejectEnd(err);
    },
  };
  return { seen, handler, ended };
}

function dispatcherFor(app: LocalApp, bodyTimeoutMs = 0): InProcessDispatcher {
  const fallback = { dispatch: () => { throw new Error('not local'); } } as unknown as Dispatcher;
  return new InProcessDispatcher((origin) => (origin === ORIGIN ? app : undefined), fallback, bodyTimeoutMs);
}

/** A body of `total` bytes made lazily, counting what was pulled from it. */
function lazyBody(total: number, chunkSize = 64 * 1024): Readable & { produced: number } {
  const chunk = Buffer.alloc(chunkSize, 0x61);
  const body = new Readable({
    read() {
      if (body.produced >= total) {
        this.push(null);
        return;
      }
      const size = Math.min(chunkSize, total - body.produced);
      body.produced += size;
      this.push(size === chunkSize ? chunk : chunk.subarray(0, size));
    },
  }) as Readable & { produced: number };
  body.produced = 0;
  return body;
}

describe('InProcessDispatcher', () => {
  it('when an express app answers, then the relay gets its status, its headers as set, and its body, with no HTTP bytes', async () => {
    const app = express();
    app.use(express.json());
    app.post('/api/x', (req, res) => {
      res.setHeader('X-Seen', `${req.method} ${req.url} ${req.headers['content-length']} ${req.headers.host}`);
      res.status(201).json({ got: req.body as unknown });
    });
    const { seen, handler, ended } = recorder();
    dispatcherFor(app).dispatch({
      origin: ORIGIN, path: '/api/x', method: 'POST', headers: { 'content-type': 'application/json', host: 'example.test' }, body: Buffer.from('{"a":1}'),
    }, handler);
    await ended;
    expect(seen.status).toBe(201);
    expect(seen.headers['x-seen']).toBe('POST /api/x 7 example.test');
    expect(seen.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Buffer.concat(seen.chunks).toString()).toBe('{"got":{"a":1}}');
  });

  it('when the service reads the request\'s raw headers (as @tus/server does, through srvx), then they are the headers given, as a parser would list them', async () => {
    const app: LocalApp = (req, res) => {
      res.end(JSON.stringify(req.rawHeaders));
    };
    const { seen, handler, ended } = recorder();
    dispatcherFor(app).dispatch({
      origin: ORIGIN, path: '/files/uploads/x', method: 'GET', headers: { 'Tus-Resumable': '1.0.0', 'upload-offset': '5', host: 'example.test' },
    }, handler);
    await ended;
    expect(JSON.parse(Buffer.concat(seen.chunks).toString())).toEqual(['tus-resumable', '1.0.0', 'upload-offset', '5', 'host', 'example.test']);
  });

  it('when the answer\'s headers were given to writeHead alone, then they are read from the header block', async () => {
    const app: LocalApp = (_req, res) => {
      res.writeHead(200, ['Content-Type', 'text/plain', 'X-Tag', 'one', 'X-Tag', 'two']);
      res.end('ok');
    };
    const { seen, handler, ended } = recorder();
    dispatcherFor(app).dispatch({ origin: ORIGIN, path: '/', method: 'GET', headers: {} }, handler);
    await ended;
    expect(seen.headers['content-type']).toBe('text/plain');
    expect(seen.headers['x-tag']).toEqual(['one', 'two']);
    expect(Buffer.concat(seen.chunks).toString()).toBe('ok');
  });

  it('when a 256 MB request body is a stream, then it flows through in chunks and is never held whole', async () => {
    const total = 256 * 1024 * 1024;
    let received = 0;
    let peakExternal = 0;
    const app: LocalApp = (req: IncomingMessage, res: ServerResponse) => {
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received % (16 * 1024 * 1024) === 0) peakExternal = Math.max(peakExternal, process.memoryUsage().arrayBuffers);
      });
      req.on('end', () => res.end(`${received} ${req.headers['transfer-encoding']}`));
    };
    const before = process.memoryUsage().arrayBuffers;
    const { seen, handler, ended } = recorder();
    dispatcherFor(app).dispatch({ origin: ORIGIN, path: '/files/uploads/x', method: 'PATCH', headers: {}, body: lazyBody(total) }, handler);
    await ended;
    expect(Buffer.concat(seen.chunks).toString()).toBe(`${total} chunked`);
    expect(peakExternal - before).toBeLessThan(32 * 1024 * 1024);
  });

  it('when the service does not read the request body, then the stream is paused, not buffered', async () => {
    const body = lazyBody(64 * 1024 * 1024);
    let request: IncomingMessage | undefined;
    const app: LocalApp = (req) => { request = req; };
    const { handler } = recorder();
    dispatcherFor(app).dispatch({ origin: ORIGIN, path: '/files/uploads/x', method: 'PATCH', headers: {}, body }, handler);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(body.produced).toBeLessThan(2 * 1024 * 1024);
    // Once the service reads, the rest comes.
    let received = 0;
    request!.on('data', (chunk: Buffer) => { received += chunk.length; });
    await new Promise<void>((resolve) => request!.once('end', () => resolve()));
    expect(received).toBe(64 * 1024 * 1024);
  });

  it('when the relay pauses the answer, then the service\'s writes report a full socket until it resumes (drain)', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x62);
    let writesBeforeDrain = 0;
    const app: LocalApp = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      let left = 32;
      const pump = (): void => {
        while (left > 0) {
          left -= 1;
          writesBeforeDrain += 1;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    };
    const { seen, handler, ended } = recorder({ pauseAfterBytes: 4 * 64 * 1024 });
    dispatcherFor(app).dispatch({ origin: ORIGIN, path: '/files/d/x', method: 'GET', headers: {} }, handler);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writesBeforeDrain).toBe(4);
    seen.controller!.resume();
    await ended;
    expect(seen.bytes).toBe(32 * 64 * 1024);
  });

  it('when the answer\'s body stalls past the body timeout, then the relay is told UND_ERR_BODY_TIMEOUT', async () => {
    const app: LocalApp = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '10' });
      res.write('12345');
    };
    const { handler, ended } = recorder();
    dispatcherFor(app, 50).dispatch({ origin: ORIGIN, path: '/', method: 'GET', headers: {} }, handler);
    await expect(ended).rejects.toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
  });

  it('when the relay aborts (client gone), then the service\'s response closes unfinished', async () => {
    let closed: Promise<boolean> | undefined;
    const app: LocalApp = (_req, res) => {
      closed = new Promise((resolve) => res.once('close', () => resolve(res.writableFinished)));
    };
    const { seen, handler, ended } = recorder();
    dispatcherFor(app).dispatch({ origin: ORIGIN, path: '/', method: 'GET', headers: {} }, handler);
    seen.controller!.abort(new Error('client gone'));
    await expect(ended).rejects.toThrow('client gone');
    await expect(closed).resolves.toBe(false);
  });

  it('when an origin is not served here, then the fallback dispatcher gets the request', () => {
    const calls: string[] = [];
    const fallback = { dispatch: (options: Dispatcher.DispatchOptions) => { calls.push(String(options.origin)); return true; } } as unknown as Dispatcher;
    new InProcessDispatcher(() => undefined, fallback).dispatch({ origin: 'http://127.0.0.1:1', path: '/', method: 'GET' }, recorder().handler);
    expect(calls).toEqual(['http://127.0.0.1:1']);
  });
});

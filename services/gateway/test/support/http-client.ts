import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Readable } from 'node:stream';

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** Names and values as they came, repeats included. */
  rawHeaders: string[];
  text: string;
  json(): any;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer | Readable;
  /** For HTTPS with a self-signed test certificate. */
  ca?: string | Buffer;
  timeoutMs?: number;
  /** Connect from this loopback address (127.0.0.2, ...) to appear as another client. */
  localAddress?: string;
}

/**
 * A plain node:http client for tests: exact control over headers (X-Forwarded-For, Content-Encoding,
 * chunked bodies) and over reading the answer while the body is still being sent.
 */
export function send(url: string, options: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const make = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = make(target, { method: options.method ?? 'GET', headers: options.headers, agent: false, ca: options.ca, localAddress: options.localAddress });
    let answered = false;
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer from ${options.method ?? 'GET'} ${target.pathname} within ${options.timeoutMs ?? 10_000} ms`));
    }, options.timeoutMs ?? 10_000);
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, rawHeaders: res.rawHeaders, text, json: () => JSON.parse(text) });
      });
      res.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    req.on('error', (err) => {
      // Once the answer is in, a reset while we were still uploading is expected.
      if (answered) return;
      clearTimeout(timer);
      reject(err);
    });
    const body = options.body;
    if (body === undefined) req.end();
    else if (typeof body === 'string' || Buffer.isBuffer(body)) req.end(body);
    else {
      body.on('error', () => req.destroy());
      body.pipe(req);
    }
  });
}

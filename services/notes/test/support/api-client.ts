import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import { checkApiAnswer } from '@vanish/testkit/openapi';

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: any;
  ms: number;
}

export interface SendOptions {
  headers?: Record<string, string>;
  /** A string is sent as UTF-8; a Buffer as is (for invalid UTF-8 and big bodies). */
  body?: string | Buffer;
  /** Skip the OpenAPI check (only for answers outside /api). */
  unchecked?: boolean;
}

/**
 * One HTTP exchange with full control of method, headers and raw body (fetch cannot send some of
 * what these tests need). Every /api answer is checked against the OpenAPI document.
 */
export function send(baseUrl: string, method: string, path: string, options: SendOptions = {}): Promise<Answer> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const url = new URL(path, baseUrl);
    const body = options.body === undefined ? undefined : Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body, 'utf8');
    const req = httpRequest(url, {
      method,
      headers: { ...(body ? { 'content-length': String(body.length) } : {}), ...options.headers },
      agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(res.headers)) {
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        let json: unknown;
        try { json = text === '' ? undefined : JSON.parse(text); } catch { json = undefined; }
        const answer: Answer = { status: res.statusCode ?? 0, headers, text, json, ms: Date.now() - started };
        try {
          if (!options.unchecked && path.startsWith('/api')) {
            checkApiAnswer({ method, path, status: answer.status, headers, body: json ?? text });
          }
        } catch (err) {
          reject(err);
          return;
        }
        resolve(answer);
      });
    });
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

export const postJson = (baseUrl: string, body: unknown) =>
  send(baseUrl, 'POST', '/api/create.php', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

/** A pino destination that keeps every log line, to prove what logs never contain. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  }
  text(): string {
    return this.lines.join('\n');
  }
}

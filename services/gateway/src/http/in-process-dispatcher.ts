import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { serverOptionsFor } from '@vanish/common';

/** A request listener as node:http's server calls it (an express app is one). */
export type LocalApp = (req: IncomingMessage, res: ServerResponse) => void;

/** An upstream served in this process: its app (an express app, or any request listener), found by the origin the relay dispatches to. */
export type LocalUpstreams = (origin: string) => LocalApp | undefined;

type Handler = Dispatcher.DispatchHandler;
type Options = Dispatcher.DispatchOptions;
type DispatchBody = Buffer | Uint8Array | string | Readable | null | undefined;

/** Thrown at the relay when the in-process upstream dropped its answer before ending it (a socket would have closed). */
export class UpstreamClosedError extends Error {
  readonly code = 'UND_ERR_SOCKET';
}

/**
 * The relay's transport when the upstream runs in this process (the all-in-one): the gateway's door and
 * relay (upstream-proxy.ts, shared-upstream-read.ts: deadline, client gone, the answer's headers, the 5xx
 * check) run exactly as they do over a socket, but the request is handed to the service's express app as
 * a request and response object, with no socket, no HTTP bytes written and none parsed again. Origins
 * that are not served here go to `fallback` (undici's agent).
 *
 * The service answers into a real ServerResponse (born with the service app's prototypes, as common's
 * listen() makes them) whose "socket" is this dispatcher's: the status and headers are taken from the
 * response object itself when its first bytes are written (the serialised header block is skipped, not
 * parsed), the body goes to the relay chunk by chunk, with the relay's pause and resume as backpressure.
 * A request body is a Buffer (the body guard's) or a stream, pushed into the request as it comes, paused
 * while the service does not read: a large upload streams through, it is never buffered here.
 */
export class InProcessDispatcher {
  /**
   * `bodyTimeoutMs`: as undici's agent's bodyTimeout (the relay's own deadline ends at the answer's
   * headers): an answer whose body then stalls for this long is cut. 0: no limit.
   */
  constructor(private readonly local: LocalUpstreams, private readonly fallback: Dispatcher, private readonly bodyTimeoutMs = 0) {}

  dispatch(options: Options, handler: Handler): boolean {
    const app = this.local(String(options.origin));
    if (!app) return this.fallback.dispatch(options, handler);
    new InProcessExchange(app, options, handler, this.bodyTimeoutMs).start();
    return true;
  }
}

/** What undici reports when an answer's body stalls past bodyTimeout; the relay cuts the client's answer. */
export class BodyTimeoutError extends Error {
  readonly code = 'UND_ERR_BODY_TIMEOUT';
}

interface MessageClasses {
  Request: new (socket: unknown) => IncomingMessage;
  Response: new (req: IncomingMessage) => ServerResponse;
}

const classesByApp = new WeakMap<LocalApp, MessageClasses>();

function classesOf(app: LocalApp): MessageClasses {
  let classes = classesByApp.get(app);
  if (!classes) {
    const options = serverOptionsFor(app as never);
    classes = {
      Request: (options.IncomingMessage ?? (require('node:http') as typeof import('node:http')).IncomingMessage) as unknown as MessageClasses['Request'],
      Response: (options.ServerResponse ?? (require('node:http') as typeof import('node:http')).ServerResponse) as unknown as MessageClasses['Response'],
    };
    classesByApp.set(app, classes);
  }
  return classes;
}

/** undici's controller for one exchange: abort, pause and resume, as the relay uses them. */
class Controller {
  aborted = false;
  paused = false;
  reason: Error | null = null;
  constructor(private readonly exchange: InProcessExchange) {}
  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.exchange.aborted(reason);
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.exchange.resumed();
  }
}

/**
 * What the request and response see as their socket. Only the calls Node's http code makes on a
 * server socket are answered: writes (the response's bytes), cork/uncork, pause/resume (the request
 * body's flow), destroy, and the addresses express reads (loopback: the service is behind the gateway).
 */
class LocalSocket extends EventEmitter {
  readonly remoteAddress = '127.0.0.1';
  readonly remoteFamily = 'IPv4';
  readonly remotePort = 0;
  readonly localAddress = '127.0.0.1';
  readonly encrypted = undefined;
  /** As a kept-alive connection's: readable until destroyed (on-finished, and so body-parser, read a closed request otherwise). */
  readable = true;
  writable = true;
  destroyed = false;
  _paused = false;
  _httpMessage: unknown = null;
  readonly writableLength = 0;
  /** Node's response sets `corked` here before its last uncork (OutgoingMessage.end). */
  readonly _writableState = { corked: 0 };
  readonly writableHighWaterMark = 16 * 1024;

  constructor(private readonly exchange: InProcessExchange) {
    super();
  }

  write(data: string | Buffer, encoding?: BufferEncoding | null | ((err?: Error) => void), callback?: (err?: Error) => void): boolean {
    if (typeof encoding === 'function') {
      callback = encoding;
      encoding = undefined;
    }
    const more = this.exchange.written(data, encoding ?? undefined);
    if (callback) process.nextTick(callback);
    return more;
  }

  cork(): void {}
  uncork(): void {}
  setTimeout(): this { return this; }
  setNoDelay(): this { return this; }
  setKeepAlive(): this { return this; }
  ref(): this { return this; }
  unref(): this { return this; }
  address(): { address: string; family: string; port: number } { return { address: '127.0.0.1', family: 'IPv4', port: 0 }; }

  pause(): this {
    this._paused = true;
    this.exchange.bodyPaused();
    return this;
  }

  resume(): this {
    this._paused = false;
    this.exchange.bodyResumed();
    return this;
  }

  end(): this {
    return this.destroy();
  }

  destroySoon(): void {
    this.destroy();
  }

  destroy(err?: Error): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    this.writable = false;
    this.readable = false;
    process.nextTick(() => {
      if (err) this.emit('error', err);
      this.emit('close', err !== undefined);
    });
    this.exchange.socketDestroyed();
    return this;
  }
}

/** One request handed to an in-process app and its answer handed back to the relay. */
class InProcessExchange {
  private readonly controller = new Controller(this);
  private readonly socket = new LocalSocket(this);
  private req!: IncomingMessage;
  private res!: ServerResponse;
  private source: Readable | undefined;
  private started = false;
  private done = false;
  private wantsDrain = false;
  private bodyTimer: NodeJS.Timeout | undefined;

  constructor(private readonly app: LocalApp, private readonly options: Options, private readonly handler: Handler, private readonly bodyTimeoutMs: number) {
    // A listener for the errors a destroyed socket reports; they reach the relay through onResponseError.
    this.socket.on('error', () => undefined);
  }

  start(): void {
    this.handler.onRequestStart?.(this.controller as never, {});
    if (this.controller.aborted) return;
    const { Request, Response } = classesOf(this.app);
    const req = new Request(this.socket);
    this.req = req;
    req.method = this.options.method;
    req.url = this.options.path;
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.httpVersion = '1.1';
    req.headers = this.requestHeaders();
    req.rawHeaders = rawHeadersOf(req.headers);
    const res = new Response(req);
    this.res = res;
    // No chunk framing: the body's bytes reach the relay as they were written, and the relay frames them
    // for its own client. No Date line either: the gateway's own server writes one.
    res.useChunkedEncodingByDefault = false;
    res.sendDate = false;
    res.assignSocket(this.socket as never);
    res.once('finish', () => this.finished());
    res.once('close', () => this.closed());
    this.feedBody(this.options.body as DispatchBody);
    try {
      this.app(req, res);
    } catch (err) {
      this.fail(err as Error);
    }
  }

  /** The request's headers as Node's parser would give them (lower-case names), with the framing of the body given. */
  private requestHeaders(): IncomingHttpHeaders {
    const headers: IncomingHttpHeaders = {};
    const given = this.options.headers as Record<string, string | string[] | undefined> | null | undefined;
    if (given) {
      for (const name in given) {
        const value = given[name];
        if (value === undefined) continue;
        const lower = name.toLowerCase();
        headers[lower] = Array.isArray(value) && lower !== 'set-cookie' ? value.join(', ') : value;
      }
    }
    headers.host ??= new URL(String(this.options.origin)).host;
    const body = this.options.body as DispatchBody;
    if (body === null || body === undefined) {
      delete headers['transfer-encoding'];
    } else if (typeof body === 'string' || body instanceof Uint8Array) {
      headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
      delete headers['transfer-encoding'];
    } else if (headers['content-length'] === undefined) {
      headers['transfer-encoding'] = 'chunked';
    }
    return headers;
  }

  private feedBody(body: DispatchBody): void {
    const req = this.req;
    if (body === null || body === undefined) {
      req.complete = true;
      req.push(null);
      return;
    }
    if (typeof body === 'string' || body instanceof Uint8Array) {
      if (body.length > 0) req.push(typeof body === 'string' ? Buffer.from(body) : body);
      req.complete = true;
      req.push(null);
      return;
    }
    // A stream: pushed as it comes; the request's reader pauses and resumes "the socket" (readStop/readStart).
    this.source = body;
    body.on('data', (chunk: Buffer) => {
      if (!req.push(chunk)) body.pause();
    });
    body.once('end', () => {
      req.complete = true;
      req.push(null);
    });
    body.once('error', (err: Error) => {
      req.destroy(err);
      this.fail(err);
    });
  }

  bodyPaused(): void {
    this.source?.pause();
  }

  bodyResumed(): void {
    if (this.source && !this.source.readableEnded) this.source.resume();
  }

  /** Bytes the response wrote to its socket: the first write begins with the serialised header block. */
  written(data: string | Buffer, encoding: BufferEncoding | undefined): boolean {
    if (this.done || this.controller.aborted) return false;
    if (!this.started) {
      this.started = true;
      const header = (this.res as unknown as { _header: string | null })._header ?? '';
      if (typeof data === 'string') data = data.slice(header.length);
      this.handler.onResponseStart?.(this.controller as never, this.res.statusCode, responseHeaders(this.res, header), this.res.statusMessage);
      if (this.controller.aborted || this.done) return false;
      if (this.bodyTimeoutMs > 0) {
        this.bodyTimer = setTimeout(() => this.controller.abort(new BodyTimeoutError('in-process upstream body timeout')), this.bodyTimeoutMs);
      }
    } else {
      this.bodyTimer?.refresh();
    }
    if (data.length > 0) {
      const chunk = typeof data === 'string' ? Buffer.from(data, encoding ?? 'utf8') : data;
      this.handler.onResponseData?.(this.controller as never, chunk);
    }
    if (this.controller.paused) {
      this.wantsDrain = true;
      return false;
    }
    return true;
  }

  resumed(): void {
    if (!this.wantsDrain || this.done) return;
    this.wantsDrain = false;
    this.res.emit('drain');
  }

  private finished(): void {
    clearTimeout(this.bodyTimer);
    if (this.done || this.controller.aborted) return;
    this.done = true;
    // Like a server after an answer: a body the service did not read is drained, not left waiting.
    if (!this.req.readableEnded) this.req.resume();
    this.handler.onResponseEnd?.(this.controller as never, {});
    process.nextTick(() => this.res.emit('close'));
  }

  /** The response closed (destroyed by the service, or by an abort) before it finished. */
  private closed(): void {
    if (this.done) return;
    this.fail(new UpstreamClosedError('the in-process upstream closed before its answer ended'));
  }

  socketDestroyed(): void {
    if (!this.done && !this.controller.aborted) {
      const err = new UpstreamClosedError('the in-process upstream closed before its answer ended');
      process.nextTick(() => this.fail(err));
    }
  }

  /** The relay gave up (deadline, client gone): the service's request and response are torn down. */
  aborted(reason: Error): void {
    clearTimeout(this.bodyTimer);
    if (this.done) return;
    this.done = true;
    this.source?.destroy();
    if (this.res) {
      this.socket.destroy();
      if (!this.req.destroyed) this.req.destroy();
      if (!this.res.destroyed) this.res.destroy();
    }
    process.nextTick(() => this.handler.onResponseError?.(this.controller as never, reason));
  }

  private fail(err: Error): void {
    clearTimeout(this.bodyTimer);
    if (this.done || this.controller.aborted) return;
    this.done = true;
    this.source?.destroy();
    this.handler.onResponseError?.(this.controller as never, err);
  }
}

/**
 * The request's headers as name, value, name, value, as Node's parser also gives them: some readers
 * take them from there, not from `headers` (@tus/server's web Request, through srvx, which notes' uploads use).
 */
function rawHeadersOf(headers: IncomingHttpHeaders): string[] {
  const raw: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const one of value) raw.push(name, one);
    else raw.push(name, value);
  }
  return raw;
}

/**
 * The answer's headers from the response object: what setHeader stored (lower-case names, values as
 * strings or lists). An answer whose headers were all given to writeHead alone is read from its header
 * block instead (Node keeps such headers nowhere else).
 */
function responseHeaders(res: ServerResponse, header: string): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  const stored = res.getHeaders();
  let any = false;
  for (const name in stored) {
    const value = stored[name];
    if (value === undefined) continue;
    any = true;
    headers[name] = Array.isArray(value) ? value.map(String) : String(value);
  }
  if (any) return headers;
  const lines = header.split('\r\n');
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    const before = headers[name];
    if (before === undefined) headers[name] = value;
    else headers[name] = Array.isArray(before) ? [...before, value] : [before, value];
  }
  return headers;
}

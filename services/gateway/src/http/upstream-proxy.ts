import type { IncomingHttpHeaders } from 'node:http';
import type { Request, Response, RequestHandler } from 'express';
import type { Dispatcher } from 'undici';
import {
  AppError,
  errorBody,
  InternalError,
  PAGE_ERROR_HEADER,
  ServiceUnavailableError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  type Logger,
} from '@vanish/common';
import { clientAddress } from './client-address';
import { sendError, wantsPage } from './send-error';
import { applyAnswerHeaders } from './security-headers';

export interface UpstreamProxyOptions {
  name: string;
  target: string;
  /** The shared undici Agent (compose.ts): kept-alive upstream connections. */
  dispatcher: Dispatcher;
  /**
   * True for the reads that change nothing upstream (route-table.ts `repeatableRead`), relayed on a pipelining
   * agent: each is sent without waiting for the answer before it on its connection (undici's `blocking: false`;
   * by default undici holds the next request back until the previous answer's headers have arrived).
   */
  pipelined?: boolean;
  timeoutMs: number;
  logger: Logger;
  onUpstreamError?: (upstream: string, code: string) => void;
}

/**
 * Headers that describe one hop, never copied from an upstream answer to ours. X-Request-Id is the
 * gateway's own (set before the request was relayed, and forwarded upstream): the upstream's copy
 * would replace it, in lower case.
 */
const HOP_BY_HOP = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'x-powered-by', 'x-request-id',
]);

/**
 * Headers of the client's request not sent on ours to the upstream: those of the client's connection
 * (the upstream connection is the agent's, kept alive whatever the client asked of its own), and those
 * that framed the client's body. The body guard has read the body whole, so it goes upstream with its
 * own Content-Length (undici sets it), and a client's `Expect: 100-continue` was answered by us.
 */
const CLIENT_HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'upgrade', 'transfer-encoding', 'content-length', 'expect']);

/** The largest upstream 5xx body we read to check its shape. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** Errors of the upstream client that mean "no answer in time" (504), not "no answer" (502). */
const TIMEOUT_CODES = new Set(['UPSTREAM_DEADLINE', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export class UpstreamDeadlineError extends Error {
  readonly code = 'UPSTREAM_DEADLINE';
}

/** Why the relay cancelled an upstream request whose answer nobody wants any more. */
export class ClientGoneError extends Error {
  readonly code = 'CLIENT_GONE';
}

/**
 * One upstream, relayed with undici's dispatcher through the shared keep-alive agent (the upstream
 * connection is reused instead of opened per request), a deadline for the upstream's answer (504),
 * refused or broken connections as 502, and answers rewritten on the way out: DECISIONS 8 headers
 * are enforced, hop-by-hop headers dropped, and a 5xx body that is not our error shape (an HTML
 * stack trace, say) is replaced, so no upstream internals ever reach a client.
 *
 * (Until issue 18 this went through http-proxy-middleware, then through node:http's client; undici's
 * dispatcher, driven by a handler that writes straight into our answer, costs about 10 % less gateway
 * CPU per relayed request than node:http's client: docs/gateway.md, "The relay: undici".)
 */
export function createUpstreamProxy(options: UpstreamProxyOptions): RequestHandler {
  const { logger, dispatcher } = options;
  const { origin, pathPrefix } = upstreamTarget(options.target);
  const blocking = !options.pipelined;

  const fail = relayFailure(options);

  return (req, res) => {
    forwardedHeaders(req);
    const body = res.locals.body as Buffer | undefined;
    const relay = new UpstreamRelay(req, res, logger, options.name, options.timeoutMs, fail);
    try {
      dispatcher.dispatch({
        origin, path: pathPrefix + req.url, method: req.method, headers: upstreamHeaders(req.headers),
        body: body && body.length > 0 ? body : null, blocking,
      }, relay);
    } catch (err) {
      // undici refuses some paths and header values that the client's request carried.
      relay.onResponseError(undefined, err as Error);
    }
  };
}

/** Where an upstream's requests go: its origin, and the path its routes sit under. */
export function upstreamTarget(target: string): { origin: string; pathPrefix: string } {
  const url = new URL(target);
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}

/** How a relay answers an upstream that failed: 502, or 504 when timed out; logged and counted. */
export function relayFailure(options: UpstreamProxyOptions): RelayFailure {
  return (req, res, err, timedOut) => {
    const appError = timedOut ? new UpstreamTimeoutError(err) : new UpstreamUnavailableError(err);
    options.onUpstreamError?.(options.name, appError.code);
    options.logger.warn('upstream failed', {
      requestId: res.locals?.requestId,
      upstream: options.name,
      code: appError.code,
      cause: err.code ?? err.name,
    });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(req, res, appError);
  };
}

/** Whether an upstream error means "no answer in time" (504) rather than "no answer" (502). */
export function isTimeout(err: Error & { code?: string }): boolean {
  return err.code !== undefined && TIMEOUT_CODES.has(err.code);
}

/** The client's request headers minus those of its own connection and body framing (see CLIENT_HOP_HEADERS). */
export function upstreamHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const copy: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !CLIENT_HOP_HEADERS.has(name)) copy[name] = value;
  }
  return copy;
}

/** The upstream learns who the client is from us alone: a client's own X-Forwarded-* is replaced. */
export function forwardedHeaders(req: Request): void {
  req.headers['x-forwarded-for'] = clientAddress(req) ?? '';
  req.headers['x-forwarded-proto'] = req.protocol;
  if (req.headers.host) req.headers['x-forwarded-host'] = req.headers.host;
  if (req.headers.forwarded !== undefined) delete req.headers.forwarded;
}

/** How createUpstreamProxy answers a failed relay (502, or 504 when timed out), logged and counted. */
export type RelayFailure = (req: Request, res: Response, err: Error & { code?: string }, timedOut: boolean) => void;

/** What undici hands a dispatch handler: how to cancel, pause and resume the upstream answer. */
export type DispatchController = Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestStart']>>[0];

/**
 * One relayed request, as undici's dispatch handler. The upstream deadline runs from dispatch until
 * the answer's headers (until its end for a 5xx, whose body is read whole to check its shape); a
 * client that leaves before its answer was written cancels the upstream request; an answer body is
 * written into ours as it comes, paused while the client's socket is full.
 */
class UpstreamRelay implements Dispatcher.DispatchHandler {
  private controller: DispatchController | undefined;
  private readonly deadline: NodeJS.Timeout;
  private timedOut = false;
  /** The client went away, or we answered it already (a 504 at the deadline): upstream events are ignored. */
  private finished = false;
  private relaying = false;
  private waitingForDrain = false;
  /** An upstream 5xx, read whole before anything is answered. */
  private serverError: { status: number; headers: IncomingHttpHeaders; chunks: Buffer[]; bytes: number } | undefined;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly logger: Logger,
    private readonly upstream: string,
    timeoutMs: number,
    private readonly fail: RelayFailure,
  ) {
    this.deadline = setTimeout(() => this.deadlinePassed(), timeoutMs);
    res.once('close', () => {
      clearTimeout(this.deadline);
      // The client went away before its answer was written: the upstream's is not wanted.
      if (res.writableFinished || this.finished) return;
      this.finished = true;
      this.cancel(new ClientGoneError('client gone'));
    });
  }

  onRequestStart(controller: DispatchController): void {
    this.controller = controller;
    if (this.finished) controller.abort(new ClientGoneError('answered before the upstream was asked'));
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.finished) return;
    const { res } = this;
    if (res.headersSent || res.destroyed) {
      this.finished = true;
      controller.abort(new ClientGoneError('answer already sent'));
      return;
    }
    if (statusCode >= 500) {
      // Read whole before anything is answered; the deadline keeps running over the body.
      this.serverError = { status: statusCode, headers, chunks: [], bytes: 0 };
      return;
    }
    clearTimeout(this.deadline);
    copyHeaders(headers, res);
    res.status(statusCode);
    // Only now: a throw above makes undici report an error, answered 502 rather than a cut connection.
    this.relaying = true;
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    const { serverError } = this;
    if (serverError) {
      serverError.bytes += chunk.length;
      if (serverError.bytes <= MAX_ERROR_BODY_BYTES) serverError.chunks.push(chunk);
      return;
    }
    if (this.res.write(chunk) || this.waitingForDrain) return;
    controller.pause();
    this.waitingForDrain = true;
    this.res.once('drain', () => {
      this.waitingForDrain = false;
      controller.resume();
    });
  }

  onResponseEnd(): void {
    clearTimeout(this.deadline);
    if (this.finished) return;
    this.finished = true;
    this.answering(() => {
      const { serverError } = this;
      if (serverError) {
        const body = serverError.bytes > MAX_ERROR_BODY_BYTES ? undefined : Buffer.concat(serverError.chunks);
        relayServerError(body, serverError.headers, this.req, this.res, this.logger, this.upstream, serverError.status);
        return;
      }
      this.res.end();
    });
  }

  onResponseError(_controller: DispatchController | undefined, err: Error & { code?: string }): void {
    clearTimeout(this.deadline);
    if (this.finished) return; // nobody to answer, or answered already
    this.finished = true;
    // A broken upstream body cuts the client's answer; before the answer started, the client gets 502 or 504.
    if (this.relaying) {
      this.res.destroy();
      return;
    }
    this.answering(() => this.fail(this.req, this.res, err, this.timedOut || isTimeout(err)));
  }

  private answering(answer: () => void): void {
    answerOrCut(this.res, this.logger, this.upstream, answer);
  }

  private deadlinePassed(): void {
    if (this.finished) return;
    this.timedOut = true;
    const err = new UpstreamDeadlineError(this.serverError ? `upstream ${this.serverError.status} body deadline` : 'upstream deadline');
    // Answered now, not when undici reports the cancel: a request still waiting for a connection has no controller yet.
    this.onResponseError(undefined, err);
    this.cancel(err);
  }

  private cancel(reason: Error): void {
    if (this.controller && !this.controller.aborted) this.controller.abort(reason);
  }
}

/**
 * The upstream's headers onto our answer, whose door (gateway-app.ts) has set the gateway's own
 * already: DECISIONS 8, API-Version, limits, CORS, HSTS. Those stay as the gateway set them, so they
 * are set once per request (issue 18); only a page's own Content-Security-Policy takes the place of
 * the strict default, and a Vary list is added to ours.
 */
/**
 * Answers a client from inside undici's callbacks (or a deadline's timer), which must not throw:
 * undici turns a throw in onResponseEnd into onResponseError, and one in onResponseError into an
 * 'error' event nobody listens for. A failure here cuts this client's connection, logged.
 */
export function answerOrCut(res: Response, logger: Logger, upstream: string, answer: () => void): void {
  try {
    answer();
  } catch (err) {
    logger.error('the relay could not answer; connection cut', { requestId: res.locals?.requestId, upstream, err: (err as Error).message });
    res.destroy();
  }
}

export function copyHeaders(headers: IncomingHttpHeaders, res: Response): void {
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    if (name === 'vary') {
      res.vary(Array.isArray(value) ? value.join(', ') : value);
      continue;
    }
    if (name !== 'content-security-policy' && res.hasHeader(name)) continue;
    res.setHeader(name, Array.isArray(value) ? repeatedHeader(name, value) : value);
  }
}

/**
 * Headers a message may carry once: a repeat is dropped, as node:http's own client does (the relay
 * used it until issue 18); undici hands every repeat over as an array.
 */
const SINGLE_VALUED = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since',
  'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after',
  'server', 'user-agent',
]);

/** A repeated header as node:http reads it: Set-Cookie stays a list, a single-valued header keeps its first, others join. */
function repeatedHeader(name: string, values: string[]): string | string[] {
  if (name === 'set-cookie') return values;
  if (SINGLE_VALUED.has(name)) return values[0] ?? '';
  return values.join(', ');
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * A 5xx passes only when its body is our error shape (re-serialised, so extra fields such as a
 * stack are dropped), or when it is a service's own HTML page for the error, marked with the shape
 * in PAGE_ERROR_HEADER (the note page's 503 while the database is down): a browser gets that page
 * unchanged, any other client the shape. Anything else (or a body over MAX_ERROR_BODY_BYTES) is
 * replaced by the error its status means, with a warning.
 */
export function relayServerError(
  rawBody: Buffer | undefined, headers: IncomingHttpHeaders, req: Request, res: Response, logger: Logger, upstream: string, status: number,
): void {
  const retryAfter = firstValue(headers['retry-after']);
  const pageShape = parsePageErrorHeader(headers);
  if (pageShape && rawBody !== undefined && wantsPage(req, res) && isHtml(headers)) {
    // The service's own page for this error (its translated 503 page, say): passed on unchanged.
    copyHeaders(headers, res);
    applyAnswerHeaders(req, res);
    res.status(status).end(rawBody);
    return;
  }
  const body = pageShape ?? (rawBody === undefined ? undefined : parseErrorShape(rawBody.toString('utf8')));
  if (body) {
    // A browser on a web route gets the gateway's page for that error, in its language, not the JSON.
    if (wantsPage(req, res)) {
      sendError(req, res, new RelayedError(status, body.code, body.error, typeof retryAfter === 'string' ? { 'Retry-After': retryAfter } : {}));
      return;
    }
    if (typeof retryAfter === 'string') res.setHeader('Retry-After', retryAfter);
    applyAnswerHeaders(req, res);
    res.status(status).json(body);
    return;
  }
  logger.warn('upstream answered a 5xx that is not in the error shape; replaced', { upstream, status });
  sendError(req, res, replacementFor(status, retryAfter));
}

/** An upstream's own 5xx in our error shape, relayed with its status, code and Retry-After. */
class RelayedError extends AppError {
  constructor(readonly statusCode: number, code: string, message: string, headers: Record<string, string>) {
    super(code, message, { headers });
  }
}

function replacementFor(status: number, retryAfter: string | undefined): AppError {
  if (status === 503) {
    const seconds = typeof retryAfter === 'string' && /^\d+$/.test(retryAfter) ? Number(retryAfter) : 5;
    return new ServiceUnavailableError(undefined, undefined, seconds);
  }
  if (status === 504) return new UpstreamTimeoutError();
  if (status === 502) return new UpstreamUnavailableError();
  return new InternalError();
}

/** The error shape a service puts on its own 5xx page (PAGE_ERROR_HEADER), if it is one. */
function parsePageErrorHeader(headers: IncomingHttpHeaders): ReturnType<typeof errorBody> | undefined {
  const value = firstValue(headers[PAGE_ERROR_HEADER.toLowerCase()]);
  return value === undefined ? undefined : parseErrorShape(value);
}

function isHtml(headers: IncomingHttpHeaders): boolean {
  return /^text\/html\b/i.test(firstValue(headers['content-type']) ?? '');
}

function parseErrorShape(text: string): ReturnType<typeof errorBody> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null) return undefined;
    const { error, code, details } = value as Record<string, unknown>;
    if (typeof error !== 'string' || typeof code !== 'string' || !/^[A-Z][A-Z0-9_]{1,63}$/.test(code)) return undefined;
    if (typeof details !== 'object' || details === null) return undefined;
    const { parameter, message } = details as Record<string, unknown>;
    if (typeof message !== 'string' || (parameter !== null && typeof parameter !== 'string')) return undefined;
    return { error, code, details: { parameter: parameter as string | null, message } };
  } catch {
    return undefined;
  }
}

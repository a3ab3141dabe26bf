import { request as upstreamRequest, type Agent, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { Request, Response, RequestHandler } from 'express';
import {
  AppError,
  errorBody,
  InternalError,
  ServiceUnavailableError,
  UpstreamTimeoutError,
  UpstreamUnavailableError,
  type Logger,
} from '@vanish/common';
import { sendError, wantsPage } from './send-error';
import { applyAnswerHeaders } from './security-headers';

export interface UpstreamProxyOptions {
  name: string;
  target: string;
  agent: Agent;
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
 * Headers of the client's connection to us, not sent on ours to the upstream: the upstream
 * connection is the agent's, kept alive whatever the client asked of its own.
 */
const CLIENT_HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'upgrade']);

/** The largest upstream 5xx body we read to check its shape. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

class UpstreamDeadlineError extends Error {
  readonly code = 'UPSTREAM_DEADLINE';
}

/**
 * One upstream, relayed with node:http through the shared keep-alive agent (the upstream
 * connection is reused instead of opened per request), a deadline for the upstream's answer (504),
 * refused or broken connections as 502, and answers rewritten on the way out: DECISIONS 8 headers
 * are enforced, hop-by-hop headers dropped, and a 5xx body that is not our error shape (an HTML
 * stack trace, say) is replaced, so no upstream internals ever reach a client.
 *
 * (Until issue 18 this went through http-proxy-middleware; its per-request work, a legacy URL
 * parse of the target and option merging among it, cost more than the relay itself:
 * docs/performance.md, "Gateway relay".)
 */
export function createUpstreamProxy(options: UpstreamProxyOptions): RequestHandler {
  const { logger, agent } = options;
  const target = new URL(options.target);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  const port = target.port === '' ? 80 : Number(target.port);
  const pathPrefix = target.pathname.replace(/\/+$/, '');

  const fail: RelayFailure = (req, res, err, timedOut) => {
    const appError = timedOut ? new UpstreamTimeoutError(err) : new UpstreamUnavailableError(err);
    options.onUpstreamError?.(options.name, appError.code);
    logger.warn('upstream failed', {
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

  return (req, res) => {
    forwardedHeaders(req);
    let upstream: ClientRequest;
    try {
      upstream = upstreamRequest({
        agent, host, port, method: req.method, path: pathPrefix + req.url, headers: upstreamHeaders(req.headers),
      });
    } catch (err) {
      // Node refuses to send some paths and header values it accepted from the client.
      fail(req, res, err as Error, false);
      return;
    }
    let timedOut = false;
    let clientGone = false;
    const deadlineAt = Date.now() + options.timeoutMs;
    const timer = setTimeout(() => {
      timedOut = true;
      upstream.destroy(new UpstreamDeadlineError('upstream deadline'));
    }, options.timeoutMs);
    res.once('close', () => {
      clearTimeout(timer);
      // The client went away before its answer was written: the upstream's is not wanted.
      if (res.writableFinished) return;
      clientGone = true;
      upstream.destroy();
    });
    upstream.once('response', (answer) => {
      clearTimeout(timer);
      relayAnswer(answer, req, res, logger, options.name, deadlineAt, fail);
    });
    upstream.on('error', (err: Error & { code?: string }) => {
      clearTimeout(timer);
      if (clientGone) return; // nobody to answer
      fail(req, res, err, timedOut || err.code === 'ETIMEDOUT');
    });
    const body = res.locals.body as Buffer | undefined;
    if (body && body.length > 0) upstream.end(body);
    else upstream.end();
  };
}

/** The client's request headers minus those of its own connection (see CLIENT_HOP_HEADERS). */
function upstreamHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const copy: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (!CLIENT_HOP_HEADERS.has(name)) copy[name] = headers[name];
  }
  return copy;
}

/** The upstream learns who the client is from us alone: a client's own X-Forwarded-* is replaced. */
function forwardedHeaders(req: Request): void {
  req.headers['x-forwarded-for'] = req.ip ?? req.socket.remoteAddress ?? '';
  req.headers['x-forwarded-proto'] = req.protocol;
  if (req.headers.host) req.headers['x-forwarded-host'] = req.headers.host;
  if (req.headers.forwarded !== undefined) delete req.headers.forwarded;
}

/** How createUpstreamProxy answers a failed relay (502, or 504 when timed out), logged and counted. */
type RelayFailure = (req: Request, res: Response, err: Error & { code?: string }, timedOut: boolean) => void;

function relayAnswer(
  proxyRes: IncomingMessage, req: Request, res: Response, logger: Logger, upstream: string, deadlineAt: number, fail: RelayFailure,
): void {
  if (res.headersSent || res.destroyed) {
    proxyRes.resume();
    return;
  }
  const status = proxyRes.statusCode ?? 502;
  // A broken upstream body cuts the client's answer, unless that answer was already complete (a 504 for a stalled 5xx).
  proxyRes.on('error', () => { if (!res.writableEnded) res.destroy(); });
  if (status >= 500) {
    relayServerError(proxyRes, req, res, logger, upstream, status, deadlineAt, fail);
    return;
  }
  copyHeaders(proxyRes, res);
  applyAnswerHeaders(req, res);
  res.status(status);
  proxyRes.pipe(res);
}

function copyHeaders(proxyRes: IncomingMessage, res: Response): void {
  const headers = proxyRes.headers;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    res.setHeader(name, value);
  }
}

/**
 * A 5xx passes only when its body is our error shape (re-serialised, so extra fields such as a
 * stack are dropped); anything else is replaced by the error its status means. Its body is read
 * before anything is answered, so the upstream's deadline still holds: a body that has not ended
 * by then is dropped with its connection, and the client gets 504.
 */
function relayServerError(
  proxyRes: IncomingMessage, req: Request, res: Response, logger: Logger, upstream: string, status: number, deadlineAt: number,
  fail: RelayFailure,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = false;
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    fail(req, res, new UpstreamDeadlineError(`upstream ${status} body deadline`), true);
    proxyRes.destroy();
  }, Math.max(0, deadlineAt - Date.now()));
  proxyRes.once('close', () => clearTimeout(deadline));
  proxyRes.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_ERROR_BODY_BYTES) tooBig = true;
    else chunks.push(chunk);
  });
  proxyRes.on('end', () => {
    clearTimeout(deadline);
    if (timedOut) return;
    const body = tooBig ? undefined : parseErrorShape(Buffer.concat(chunks).toString('utf8'));
    if (body) {
      const retryAfter = proxyRes.headers['retry-after'];
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
    sendError(req, res, replacementFor(status, proxyRes.headers['retry-after']));
  });
}

/** An upstream's own 5xx in our error shape, relayed with its status, code and Retry-After. */
class RelayedError extends AppError {
  constructor(readonly statusCode: number, code: string, message: string, headers: Record<string, string>) {
    super(code, message, { headers });
  }
}

function replacementFor(status: number, retryAfter: string | string[] | undefined): AppError {
  if (status === 503) {
    const seconds = typeof retryAfter === 'string' && /^\d+$/.test(retryAfter) ? Number(retryAfter) : 5;
    return new ServiceUnavailableError(undefined, undefined, seconds);
  }
  if (status === 504) return new UpstreamTimeoutError();
  if (status === 502) return new UpstreamUnavailableError();
  return new InternalError();
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

import type { Agent, IncomingMessage, ServerResponse } from 'node:http';
import type { Request, Response, RequestHandler } from 'express';
import { createProxyMiddleware, type Plugin } from 'http-proxy-middleware';
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

/** The largest upstream 5xx body we read to check its shape. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

interface ProxyState {
  timer?: NodeJS.Timeout;
  timedOut: boolean;
  proxyReq?: import('node:http').ClientRequest;
}

class UpstreamDeadlineError extends Error {
  readonly code = 'UPSTREAM_DEADLINE';
}

/**
 * One upstream behind http-proxy-middleware, with a keep-alive agent (the upstream connection
 * is reused instead of opened per request), a deadline for the upstream's answer (504), refused
 * or broken connections as 502, and answers rewritten on the way out: DECISIONS 8 headers are
 * enforced, hop-by-hop headers dropped, and a 5xx body that is not our error shape (an HTML
 * stack trace, say) is replaced, so no upstream internals ever reach a client.
 */
export function createUpstreamProxy(options: UpstreamProxyOptions): RequestHandler {
  const states = new WeakMap<IncomingMessage, ProxyState>();
  const { logger } = options;

  const fail = (req: IncomingMessage, res: ServerResponse | import('node:net').Socket, err: Error & { code?: string }): void => {
    const state = states.get(req);
    if (state?.timer) clearTimeout(state.timer);
    if (!('setHeader' in res)) {
      res.destroy();
      return;
    }
    const timedOut = state?.timedOut === true || err instanceof UpstreamDeadlineError || err.code === 'ETIMEDOUT';
    const appError = timedOut ? new UpstreamTimeoutError(err) : new UpstreamUnavailableError(err);
    options.onUpstreamError?.(options.name, appError.code);
    logger.warn('upstream failed', {
      requestId: (res as Response).locals?.requestId,
      upstream: options.name,
      code: appError.code,
      cause: err.code ?? err.name,
    });
    if (res.headersSent) {
      res.destroy();
      return;
    }
    sendError(req as Request, res as Response, appError);
  };

  const plugin: Plugin<Request, Response> = (proxyServer) => {
    proxyServer.on('proxyReq', (proxyReq, req, res) => {
      const state = states.get(req);
      if (state) state.proxyReq = proxyReq;
      if (state?.timedOut) {
        proxyReq.destroy();
        return;
      }
      const body = (res as Response).locals?.body as Buffer | undefined;
      if (body && body.length > 0) {
        if (proxyReq.writableEnded) {
          proxyReq.destroy(new Error('request body could not be re-sent'));
          return;
        }
        proxyReq.write(body);
      }
    });
    proxyServer.on('proxyRes', (proxyRes, req, res) => {
      const state = states.get(req);
      if (state?.timer) clearTimeout(state.timer);
      relayAnswer(proxyRes, req as Request, res as Response, logger, options.name);
    });
    proxyServer.on('error', (err, req, res) => fail(req, res, err as Error & { code?: string }));
    proxyServer.on('econnreset', () => {
      // The client went away while we waited for the upstream: nothing to answer.
    });
  };

  const proxy = createProxyMiddleware<Request, Response>({
    target: options.target,
    agent: options.agent,
    changeOrigin: false,
    xfwd: false,
    selfHandleResponse: true,
    ejectPlugins: true,
    plugins: [plugin],
  });

  return (req, res, next) => {
    const state: ProxyState = { timedOut: false };
    states.set(req, state);
    state.timer = setTimeout(() => {
      state.timedOut = true;
      if (state.proxyReq) state.proxyReq.destroy(new UpstreamDeadlineError('upstream deadline'));
      else fail(req, res, new UpstreamDeadlineError('upstream deadline'));
    }, options.timeoutMs);
    res.once('close', () => clearTimeout(state.timer));
    forwardedHeaders(req);
    void proxy(req, res, next);
  };
}

/** The upstream learns who the client is from us alone: a client's own X-Forwarded-* is replaced. */
function forwardedHeaders(req: Request): void {
  req.headers['x-forwarded-for'] = req.ip ?? req.socket.remoteAddress ?? '';
  req.headers['x-forwarded-proto'] = req.protocol;
  if (req.headers.host) req.headers['x-forwarded-host'] = req.headers.host;
  if (req.headers.forwarded !== undefined) delete req.headers.forwarded;
}

function relayAnswer(proxyRes: IncomingMessage, req: Request, res: Response, logger: Logger, upstream: string): void {
  if (res.headersSent || res.destroyed) {
    proxyRes.resume();
    return;
  }
  const status = proxyRes.statusCode ?? 502;
  proxyRes.on('error', () => res.destroy());
  if (status >= 500) {
    relayServerError(proxyRes, req, res, logger, upstream, status);
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
 * stack are dropped); anything else is replaced by the error its status means.
 */
function relayServerError(proxyRes: IncomingMessage, req: Request, res: Response, logger: Logger, upstream: string, status: number): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooBig = false;
  proxyRes.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_ERROR_BODY_BYTES) tooBig = true;
    else chunks.push(chunk);
  });
  proxyRes.on('end', () => {
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

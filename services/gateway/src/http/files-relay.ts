import type { IncomingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { Request, RequestHandler, Response } from 'express';
import type { Dispatcher } from 'undici';
import { AppError, RateLimitedError, UpstreamTimeoutError, ValidationError, transferScavenger, type Logger } from '@vanish/common';
import type { FileBytesLimiter } from '../adapters/limiter/file-bytes-limiter';
import { createClientKeyDeriver } from '../domain/client-key';
import { rateLimitHeaders } from '../domain/limit-policy';
import { clientAddress } from './client-address';
import { sendError } from './send-error';
import {
  answerOrCut, copyHeaders, forwardedHeaders, MAX_ERROR_BODY_BYTES, relayFailure, relayServerError, upstreamHeaders, upstreamTarget,
  type DispatchController, type RelayFailure,
} from './upstream-proxy';

export interface FilesRelayOptions {
  /** The notes service (NOTES_URL). */
  target: string;
  /** An agent of its own (compose.ts): no body timeout of its own, the idle timer below is the only one. */
  dispatcher: Dispatcher;
  /** FILE_IDLE_TIMEOUT_SECONDS: no byte either way for this long cuts the transfer. */
  idleTimeoutMs: number;
  /** FILE_BYTES_PER_HOUR per client address. */
  bytes: FileBytesLimiter;
  limiterKey: Buffer;
  logger: Logger;
  onUpstreamError?: (upstream: string, code: string) => void;
  onRateLimited?: () => void;
  /** Bytes relayed, counted as each transfer ends (gateway_file_bytes_total). */
  onBytes?: (direction: 'upload' | 'download', bytes: number) => void;
}

/** A PATCH must say how many bytes it sends: the limit is checked on that before a byte is relayed. */
class LengthRequiredError extends AppError {
  readonly statusCode = 411;
}

/** The client stopped sending for FILE_IDLE_TIMEOUT_SECONDS. */
class UploadIdleError extends AppError {
  readonly statusCode = 408;
}

/**
 * `/files/uploads/*` (tus HEAD, PATCH, OPTIONS) and `/files/d/*` (GET, HEAD) to notes (DECISIONS 14),
 * streamed both ways: the request body goes upstream as the client sends it (pulled by undici, so a
 * slow notes slows the client down, never the gateway's memory), the answer comes back as notes sends
 * it, paused while the client's socket is full. Nothing is buffered beyond the sockets' own windows.
 *
 * A PATCH carries Content-Length (411 otherwise) and reserves that many bytes of the client's
 * FILE_BYTES_PER_HOUR before anything is relayed: over the limit it answers 429 in the error shape and
 * notes never sees the request, so nothing is half-stored. Bytes reserved but not sent are given back.
 * A transfer that moves no byte either way for FILE_IDLE_TIMEOUT_SECONDS is cut (408 while the client
 * was sending, 504 while notes was silent); there is no total deadline, so a large file on a slow
 * link is never cut while it moves. Kept apart from upstream-proxy.ts, whose deadline suits JSON.
 */
export function createFilesRelay(options: FilesRelayOptions): RequestHandler {
  const { origin, pathPrefix } = upstreamTarget(options.target);
  const clientKey = createClientKeyDeriver(options.limiterKey);
  const fail = relayFailure({ name: 'notes', target: options.target, dispatcher: options.dispatcher, timeoutMs: options.idleTimeoutMs, logger: options.logger, onUpstreamError: options.onUpstreamError });

  return async (req, res, next) => {
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    if (encoding !== 'identity' && encoding !== '') {
      next(new ValidationError('INVALID_CONTENT_TYPE', 'Compressed request bodies are not accepted (Content-Encoding must be identity)', { parameter: null }));
      return;
    }
    let reserved = 0;
    let key = '';
    if (req.method === 'PATCH') {
      const declared = req.headers['content-length'];
      if (declared === undefined || !/^\d{1,16}$/.test(declared) || req.headers['transfer-encoding'] !== undefined) {
        next(new LengthRequiredError('LENGTH_REQUIRED', 'An upload PATCH must carry Content-Length', { parameter: null }));
        return;
      }
      reserved = Number(declared);
      key = clientKey(clientAddress(req) ?? 'unknown');
      const decision = await options.bytes.reserve(key, reserved);
      if (!decision.allowed) {
        options.onRateLimited?.();
        next(new RateLimitedError(decision.resetSeconds, rateLimitHeaders(decision)));
        return;
      }
    } else if (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') {
      next(new ValidationError('INVALID_REQUEST', 'Only an upload PATCH carries a body', { parameter: null }));
      return;
    }
    if (req.headers.expect !== undefined) delete req.headers.expect;
    forwardedHeaders(req);
    const headers = upstreamHeaders(req.headers);
    if (req.method === 'PATCH') headers['content-length'] = String(reserved);
    const relay = new FileRelay(req, res, options.logger, options.idleTimeoutMs, fail, (sent, received) => {
      void options.bytes.giveBack(key, reserved - sent);
      if (sent > 0) options.onBytes?.('upload', sent);
      if (received > 0) options.onBytes?.('download', received);
    });
    try {
      options.dispatcher.dispatch({
        origin, path: pathPrefix + req.url, method: req.method, headers,
        body: req.method === 'PATCH' ? Readable.from(relay.requestBody(), { objectMode: false, highWaterMark: 64 * 1024 }) : null,
      }, relay);
    } catch (err) {
      relay.onResponseError(undefined, err as Error);
    }
  };
}

class FileRelay implements Dispatcher.DispatchHandler {
  private controller: DispatchController | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private finished = false;
  private relaying = false;
  private waitingForDrain = false;
  private bodyDone = false;
  private sent = 0;
  private received = 0;
  private settled = false;
  private serverError: { status: number; headers: IncomingHttpHeaders; chunks: Buffer[]; bytes: number } | undefined;

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly logger: Logger,
    private readonly idleMs: number,
    private readonly fail: RelayFailure,
    private readonly onSettled: (sentBytes: number, receivedBytes: number) => void,
  ) {
    this.touch();
    res.once('close', () => {
      this.settle();
      if (res.writableFinished || this.finished) return;
      this.finished = true;
      this.cancel(new Error('client gone'));
    });
  }

  /**
   * The client's body, pulled by undici chunk by chunk: counted, and each chunk is progress. When
   * undici stops pulling (notes failed or closed early) the client's request is left open, not
   * destroyed, so that the error answer can still be written after the rest of the body is drained.
   */
  async *requestBody(): AsyncGenerator<Buffer> {
    for await (const chunk of this.req.iterator({ destroyOnReturn: false })) {
      this.sent += (chunk as Buffer).length;
      transferScavenger.moved((chunk as Buffer).length);
      this.touch();
      yield chunk as Buffer;
    }
    this.bodyDone = true;
    this.touch();
  }

  onRequestStart(controller: DispatchController): void {
    this.controller = controller;
    if (this.finished) controller.abort(new Error('answered before the upstream was asked'));
  }

  onResponseStart(controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.finished) return;
    this.touch();
    const { res } = this;
    if (res.headersSent || res.destroyed) {
      this.finished = true;
      controller.abort(new Error('answer already sent'));
      return;
    }
    if (statusCode >= 500) {
      this.serverError = { status: statusCode, headers, chunks: [], bytes: 0 };
      return;
    }
    copyHeaders(headers, res);
    res.status(statusCode);
    this.relaying = true;
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    if (this.finished) return;
    this.touch();
    const { serverError } = this;
    if (serverError) {
      serverError.bytes += chunk.length;
      if (serverError.bytes <= MAX_ERROR_BODY_BYTES) serverError.chunks.push(chunk);
      return;
    }
    this.received += chunk.length;
    transferScavenger.moved(chunk.length);
    if (this.res.write(chunk) || this.waitingForDrain) return;
    controller.pause();
    this.waitingForDrain = true;
    this.res.once('drain', () => {
      this.waitingForDrain = false;
      this.touch();
      controller.resume();
    });
  }

  onResponseEnd(): void {
    this.stopTimer();
    if (this.finished) return;
    this.finished = true;
    answerOrCut(this.res, this.logger, 'notes', () => {
      const { serverError } = this;
      if (serverError) {
        const body = serverError.bytes > MAX_ERROR_BODY_BYTES ? undefined : Buffer.concat(serverError.chunks);
        relayServerError(body, serverError.headers, this.req, this.res, this.logger, 'notes', serverError.status);
        return;
      }
      this.res.end();
    });
    this.settle();
  }

  onResponseError(_controller: DispatchController | undefined, err: Error & { code?: string }): void {
    this.stopTimer();
    if (this.finished) return;
    this.finished = true;
    this.settle();
    if (this.relaying) {
      this.res.destroy();
      return;
    }
    answerOrCut(this.res, this.logger, 'notes', () => this.fail(this.req, this.res, err, false));
  }

  /** Progress: the idle timer starts again. One timer, refreshed (not a new one per chunk: thousands a second). */
  private touch(): void {
    if (this.finished) return;
    if (this.idleTimer) this.idleTimer.refresh();
    else this.idleTimer = setTimeout(() => this.idle(), this.idleMs);
  }

  private stopTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private idle(): void {
    if (this.finished) return;
    this.finished = true;
    const clientIdle = this.req.method === 'PATCH' && !this.bodyDone;
    this.logger.info('file transfer idle; cut', { requestId: this.res.locals?.requestId, idleMs: this.idleMs, waitingFor: clientIdle ? 'client' : 'notes' });
    this.cancel(new Error('idle'));
    this.settle();
    if (this.relaying || this.res.headersSent) {
      this.res.destroy();
      return;
    }
    const error = clientIdle
      ? new UploadIdleError('UPLOAD_IDLE', `No upload bytes arrived for ${Math.round(this.idleMs / 1000)} s; resume the upload`, { parameter: null })
      : new UpstreamTimeoutError();
    answerOrCut(this.res, this.logger, 'notes', () => {
      this.res.setHeader('Connection', 'close');
      sendError(this.req, this.res, error);
    });
  }

  private settle(): void {
    if (this.settled) return;
    this.settled = true;
    this.onSettled(this.sent, this.received);
  }

  private cancel(reason: Error): void {
    if (this.controller && !this.controller.aborted) this.controller.abort(reason);
  }
}

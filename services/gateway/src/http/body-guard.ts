import type { Request, RequestHandler, Response } from 'express';
import { AppError, MAX_JSON_BYTES, ValidationError } from '@vanish/common';

/**
 * A body must have arrived this long after the request began (what the listener's requestTimeout
 * did before files, whose uploads have an idle timeout instead: files-relay.ts).
 */
export const BODY_DEADLINE_MS = 30_000;

/**
 * The listener's old requestTimeout for every request that is not a file transfer, whatever answers it:
 * a body still arriving `ms` after the request began (an OPTIONS, a redirect or any early answer whose
 * body Node would otherwise keep reading) has its connection closed. The body guard answers 408 before
 * that for the bodies it reads; this is the backstop for the rest. Files have their idle timeout.
 */
export function cutUnfinishedBodies(ms = BODY_DEADLINE_MS + 5000, exempt: (res: Response) => boolean = () => false): RequestHandler {
  return (req, res, next) => {
    // A request that announces no body (neither Content-Length above 0 nor Transfer-Encoding) has none
    // to drip: Node's parser ends it with its headers. Most requests are such GETs: no timer for them.
    if (req.complete || !announcesBody(req) || exempt(res)) {
      next();
      return;
    }
    const timer = setTimeout(() => {
      if (!req.complete) req.socket?.destroy();
    }, ms);
    timer.unref();
    const clear = (): void => clearTimeout(timer);
    req.once('end', clear);
    req.once('close', clear);
    next();
  };
}

function announcesBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

class RequestTimeoutError extends AppError {
  readonly statusCode = 408;
}

/**
 * DECISIONS 4 at the door: a request body is at most 128 KiB counted on the wire (also when it
 * is chunked and announces no length), and it is not compressed (a gzip bomb of a few KiB could
 * inflate to gigabytes in a service behind us). Allowed bodies are buffered here (bounded by the
 * limit) and re-sent to the upstream with an exact Content-Length, so the upstream sees the very
 * bytes the client sent and never has to cope with a slow or endless chunked upload.
 *
 * Compressed bodies answer 400 INVALID_CONTENT_TYPE (the client may resend the same JSON
 * uncompressed; PAYLOAD_TOO_LARGE would wrongly suggest that a smaller body helps).
 */
export function bodyGuard(limitBytes = MAX_JSON_BYTES, deadlineMs = BODY_DEADLINE_MS): RequestHandler {
  return (req, res, next) => {
    const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
    const declared = req.headers['content-length'];
    const chunked = req.headers['transfer-encoding'] !== undefined;
    const hasBody = chunked || (declared !== undefined && declared !== '0');
    if (encoding !== 'identity' && encoding !== '') {
      next(new ValidationError('INVALID_CONTENT_TYPE', 'Compressed request bodies are not accepted (Content-Encoding must be identity)', { parameter: null }));
      return;
    }
    // A client asking to wait for "100 Continue" gets it from Node; the upstream gets a plain body.
    if (req.headers.expect !== undefined) delete req.headers.expect;
    if (!hasBody) {
      next();
      return;
    }
    if (declared !== undefined && Number(declared) > limitBytes) {
      next(tooLarge(limitBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const deadline = setTimeout(() => settle(new RequestTimeoutError('REQUEST_TIMEOUT', 'The request body did not arrive in time', { parameter: null })), deadlineMs);
    const settle = (err?: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (err) {
        chunks.length = 0;
        next(err);
        return;
      }
      const body = Buffer.concat(chunks, received);
      res.locals.body = body;
      req.headers['content-length'] = String(body.length);
      delete req.headers['transfer-encoding'];
      next();
    };
    const onData = (chunk: Buffer): void => {
      received += chunk.length;
      if (received > limitBytes) {
        settle(tooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle();
    const onError = (): void => settle(new ValidationError('INVALID_JSON', 'Request body could not be read'));
    const onClose = (): void => {
      if (!req.complete) onError();
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  };
}

function tooLarge(limitBytes: number): ValidationError {
  return new ValidationError('PAYLOAD_TOO_LARGE', `Request body exceeds ${limitBytes / 1024} KiB`, { parameter: null });
}

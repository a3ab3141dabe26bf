import type { Request, Response } from 'express';
import { bodyErrorToAppError, toAppError, type AppError } from '@vanish/common';
import { ErrorPages } from './error-pages';
import { applyAnswerHeaders } from './security-headers';

/** How long, and how much, an unread request body is read and thrown away before an early answer. */
const DRAIN_MAX_MS = 1000;
const DRAIN_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Sends an error in the SPEC 7 body (with the error's own headers, such as Allow or Retry-After).
 * Pages that a browser asked for get a small HTML page in the reader's language instead (error-pages.ts);
 * /api answers stay JSON, in English.
 *
 * When the answer comes before the request body was read (a 429, a body over the limit, a
 * compressed body), the rest of the body is read and discarded for a bounded time first, then
 * the connection is closed: answering at once and closing would make the client's TCP stack
 * reset the connection, and the client would see "connection reset" instead of our 400/429.
 * Nothing is kept while draining, so memory stays flat.
 */
export function sendError(req: Request, res: Response, err: unknown): void {
  const appError: AppError = bodyErrorToAppError(err) ?? toAppError(err);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const announcesBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  const bodyPending = announcesBody && !(req.complete || req.readableEnded || req.destroyed);
  if (!bodyPending) {
    write(req, res, appError);
    return;
  }
  res.setHeader('Connection', 'close');
  let drained = 0;
  let done = false;
  const finish = (): void => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', finish);
    req.off('error', finish);
    req.off('close', finish);
    // A client whose connection is gone (it closed while its body was being discarded) gets nothing.
    if (!res.writableEnded && !res.destroyed && req.socket) write(req, res, appError);
  };
  const onData = (chunk: Buffer): void => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) finish();
  };
  const timer = setTimeout(finish, DRAIN_MAX_MS);
  req.on('data', onData);
  req.once('end', finish);
  req.once('error', finish);
  req.once('close', finish);
  req.resume();
}

/** A browser on a web route: it gets a page, never the JSON body. */
export function wantsPage(req: Request, res: Response): boolean {
  return res.locals.routeKind === 'page' && req.accepts(['json', 'html']) === 'html';
}

/** Read on the first page error, like the other catalogues, once per process. */
let errorPages: ErrorPages | undefined;

function write(req: Request, res: Response, appError: AppError): void {
  applyAnswerHeaders(req, res);
  for (const [name, value] of Object.entries(appError.headers)) res.setHeader(name, value);
  res.status(appError.statusCode);
  if (wantsPage(req, res)) {
    // A form over the limit gets 413, as the notes service answers it (issue 32); /api keeps DECISIONS 4's 400.
    if (appError.code === 'PAYLOAD_TOO_LARGE') res.status(413);
    errorPages ??= ErrorPages.load();
    res.vary('Cookie');
    res.vary('Accept-Language');
    res.type('html').send(errorPages.render(req, appError));
    return;
  }
  res.json(appError.toBody());
}

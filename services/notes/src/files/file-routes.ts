import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { Router, type ErrorRequestHandler, type RequestHandler } from 'express';
import { Server as TusServer } from '@tus/server';
import {
  DependencyUnavailableError, MethodNotAllowedError, NotFoundError, apiHeaders, errorBody, errorHandler, isUndecodablePath,
  methodsOnly, routeName, transferScavenger, type Logger, type Outages,
} from '@vanish/common';
import { classifyClient } from '../receipts/client-class';
import { ConflictError, PayloadTooLargeError, PreconditionFailedError, RangeNotSatisfiableError, UnsupportedMediaTypeError } from './errors';
import type { FileService } from './file-service';
import type { UploadRecord } from './ports';
import { serveTusWithNodeBodies } from './tus-node-body';

/** Route templates: the only names metrics and access logs see (never a token). */
export const FILE_ROUTES = {
  upload: '/files/uploads/:token',
  download: '/files/d/:token',
} as const;

const UPLOAD_METHODS = ['HEAD', 'PATCH', 'OPTIONS'];
/**
 * An upload that moves no byte for this long is cut (the gateway's own idle timeout, FILE_IDLE_TIMEOUT_SECONDS,
 * 60 s by default, comes first). Never a total deadline: a large file on a slow link takes what it takes.
 */
export const UPLOAD_IDLE_TIMEOUT_MS = 120_000;
/** Every other request body must have arrived within this long (what the listener's requestTimeout did). */
export const BODY_DEADLINE_MS = 30_000;
const TUS_VERSION = '1.0.0';
const OFFSET_STREAM = 'application/offset+octet-stream';

export interface FileRoutesDeps {
  files: FileService;
  logger: Logger;
  outages?: Outages;
  /** False while the database cannot be used yet: 503 with Retry-After. */
  isAvailable?: () => boolean;
}

/** What tus answers, said in the error shape (SPEC 7) with our codes; its own wording never reaches a client. */
const TUS_ERRORS: Record<number, { code: string; message: string }> = {
  400: { code: 'INVALID_UPLOAD', message: 'The upload request is not valid tus 1.0.0 (Upload-Offset and Content-Type are required)' },
  403: { code: 'UPLOAD_COMPLETE', message: 'This upload is complete; it takes no more bytes' },
  404: { code: 'NOT_FOUND', message: 'No upload at this address (unknown, or its note has ended)' },
  409: { code: 'OFFSET_MISMATCH', message: 'Upload-Offset is not where the upload stands; ask with HEAD and resume from there' },
  410: { code: 'NOT_FOUND', message: 'No upload at this address (unknown, or its note has ended)' },
  413: { code: 'UPLOAD_TOO_LARGE', message: 'The upload would pass the size declared when the note was created' },
  415: { code: 'INVALID_CONTENT_TYPE', message: `An upload's body is ${OFFSET_STREAM}` },
};

function available(deps: FileRoutesDeps): RequestHandler {
  return (_req, _res, next) => {
    next(deps.isAvailable && !deps.isAvailable() ? new DependencyUnavailableError('database', 'The note store is not available yet; retry shortly') : undefined);
  };
}

/** Any other path under the mount names nothing: 404 in the error shape (never the pages' 404 page). */
function noSuchFile(message: string): RequestHandler {
  return (_req, _res, next) => next(new NotFoundError('NOT_FOUND', message));
}


/** A path token express could not decode names nothing; its error quotes the raw path, so it never reaches a log. */
const undecodableAsNotFound: ErrorRequestHandler = (err, _req, _res, next) => {
  next(isUndecodablePath(err) ? new NotFoundError() : err);
};

/**
 * The uploads (DECISIONS 14), mounted at /files/uploads: tus 1.0.0 core (HEAD, PATCH; OPTIONS) through
 * @tus/server into the storage's tus DataStore. Each upload was created by the server with the note,
 * so a client's tus creation POST is refused (405). The address's token is looked up by its keyed hash
 * and mapped to the random object name before tus sees the request; tus never sees the token and no
 * log line carries it. Every refusal is in the error shape.
 */
export function createUploadRoutes(deps: FileRoutesDeps): Router {
  const router = Router();
  const { files } = deps;
  const uploads = new WeakMap<IncomingMessage, UploadRecord>();
  const uploadOf = (req: unknown): UploadRecord | undefined => {
    const node = (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
    return node ? uploads.get(node) : undefined;
  };
  const tus = new TusServer({
    path: '/files/uploads',
    datastore: files.storage.tusDataStore(),
    maxSize: files.limits.maxBytes,
    // CORS stays off (DECISIONS 8): the pages upload from our own origin.
    allowedOrigins: () => false,
    respectForwardedHeaders: false,
    disableTerminationForFinishedUploads: true,
    getFileIdFromRequest: (req) => uploadOf(req)?.objectName,
    // Never used (no creation POST reaches tus), but never the default either.
    namingFunction: () => { throw new MethodNotAllowedError(UPLOAD_METHODS); },
    onUploadFinish: async (req) => {
      const upload = uploadOf(req);
      if (upload) await files.completed(upload);
      return {};
    },
    onResponseError: (_req, err) => {
      const status = 'status_code' in err && typeof err.status_code === 'number' ? err.status_code : 500;
      if (status >= 500) {
        deps.logger.error('upload failed in the file store', { status, err: err instanceof Error ? { name: err.name, message: err.message } : String((err as { body?: unknown }).body ?? '') });
        return { status_code: 500, body: JSON.stringify(errorBody('INTERNAL_ERROR', 'The upload could not be stored; resume it shortly')) };
      }
      const known = TUS_ERRORS[status] ?? { code: 'INVALID_UPLOAD', message: 'The upload request was refused' };
      return { status_code: status, body: JSON.stringify(errorBody(known.code, known.message)) };
    },
  });
  const handleTus = serveTusWithNodeBodies(tus);

  router.use(apiHeaders);
  // The collection: a tus creation POST lands here. Uploads are created by the server with their note.
  router.all('/', routeName('/files/uploads'), () => { throw new MethodNotAllowedError(['OPTIONS']); });
  router.all('/:token', routeName(FILE_ROUTES.upload), async (req, res) => {
    res.setHeader('Allow', UPLOAD_METHODS.join(', '));
    if (req.method === 'OPTIONS') {
      res.setHeader('Tus-Resumable', TUS_VERSION);
      res.setHeader('Tus-Version', TUS_VERSION);
      res.setHeader('Tus-Max-Size', String(files.limits.maxBytes));
      res.status(204).end();
      return;
    }
    // No tus creation: the server made every upload with its note (and GET/DELETE are not tus core).
    if (!UPLOAD_METHODS.includes(req.method)) throw new MethodNotAllowedError(UPLOAD_METHODS);
    if (deps.isAvailable && !deps.isAvailable()) throw new DependencyUnavailableError('database', 'The note store is not available yet; retry shortly');
    const upload = await files.findUpload(String(req.params.token));
    if (!upload) throw new NotFoundError('NOT_FOUND', 'No upload at this address (unknown, or its note has ended)');
    if (req.get('tus-resumable') !== TUS_VERSION) {
      res.setHeader('Tus-Version', TUS_VERSION);
      throw new PreconditionFailedError('TUS_VERSION_UNSUPPORTED', `Uploads speak tus ${TUS_VERSION}: send Tus-Resumable: ${TUS_VERSION}`);
    }
    if (req.method === 'PATCH') {
      if (upload.state === 'complete') throw new ConflictError('UPLOAD_COMPLETE', 'This upload is complete; it takes no more bytes');
      if ((req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase() !== OFFSET_STREAM) {
        throw new UnsupportedMediaTypeError('INVALID_CONTENT_TYPE', `An upload's body is ${OFFSET_STREAM}`);
      }
      // Refused here, before tus reads a byte: tus answers this with `Connection: close` and closes under the
      // body still arriving, so a relay in front (the gateway) fails its write and its client sees 502, not 413.
      // Answered by express, Node discards the rest of the body and the client reads the 413.
      const offset = Number(req.get('upload-offset'));
      const length = Number(req.get('content-length'));
      if (Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0 && offset + length > upload.size) {
        throw new PayloadTooLargeError('UPLOAD_TOO_LARGE', TUS_ERRORS[413]!.message);
      }
    }
    uploads.set(req, upload);
    // An idle timeout instead of the listener's deadline (see bodyDeadline): the server cuts a socket
    // that stays silent this long; after the answer, keep-alive sets its own.
    req.setTimeout(UPLOAD_IDLE_TIMEOUT_MS);
    const answered = jsonErrorsAndOffset(res);
    await handleTus(req, res);
    if (req.method !== 'PATCH') return;
    const from = Number(req.get('upload-offset'));
    if (answered.status < 300 && answered.offset !== undefined && Number.isFinite(from)) files.observeBytesIn(answered.offset - from);
    // A refused PATCH may still have stored bytes up to the declared size (a body longer than declared,
    // sent without Content-Length): the store then holds the whole upload, and the note must know it.
    if (answered.status >= 400) {
      const stored = await files.storage.stat(upload.objectName).catch(() => null);
      // A PATCH cut or refused part-way may still have stored bytes: they count as received (a 409 wrote nothing).
      if (stored && answered.status !== 409 && Number.isFinite(from)) files.observeBytesIn(stored.size - from);
      if (stored?.complete) await files.completed(upload);
    }
  });
  router.use(noSuchFile('No upload at this address (unknown, or its note has ended)'));
  router.use(undecodableAsNotFound);
  router.use(errorHandler(deps.logger.child('notes/files'), deps.outages));
  return router;
}

/**
 * @tus/server answers through writeHead: an error's body (made JSON by onResponseError) gets the JSON
 * content type, and the status and new offset are kept for the metrics.
 */
function jsonErrorsAndOffset(res: ServerResponse): { status: number; offset?: number } {
  const answered: { status: number; offset?: number } = { status: 0 };
  const original = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    answered.status = status;
    const headers = rest.find((arg) => typeof arg === 'object' && arg !== null) as OutgoingHttpHeaders | string[] | undefined;
    if (Array.isArray(headers)) {
      for (let i = 0; i + 1 < headers.length; i += 2) {
        const name = String(headers[i]).toLowerCase();
        if (name === 'upload-offset') answered.offset = Number(headers[i + 1]);
        if (name === 'content-type' && status >= 400) headers[i + 1] = 'application/json; charset=utf-8';
      }
    } else if (headers) {
      for (const [name, value] of Object.entries(headers)) {
        if (name.toLowerCase() === 'upload-offset') answered.offset = Number(value);
        if (name.toLowerCase() === 'content-type' && status >= 400) headers[name] = 'application/json; charset=utf-8';
      }
    }
    if (status >= 400) res.setHeader('Content-Type', 'application/json; charset=utf-8');
    return original(status, ...rest);
  }) as typeof res.writeHead;
  return answered;
}

/**
 * The notes listener has no whole-request deadline (requestTimeout 0), so that an upload may take as long as
 * it moves. Every other request keeps the old bound: a body not complete within `ms` is answered 408 and its
 * connection closed. Uploads (PATCH under /files/uploads/) have their idle timeout instead.
 */
export function bodyDeadline(ms = BODY_DEADLINE_MS): RequestHandler {
  return (req, res, next) => {
    if (req.complete || (req.method === 'PATCH' && req.path.startsWith('/files/uploads/'))) {
      next();
      return;
    }
    const timer = setTimeout(() => {
      if (req.complete) return;
      if (!res.headersSent) {
        res.writeHead(408, { Connection: 'close', 'Content-Length': '0' });
        res.end(() => req.socket.destroy());
      } else {
        req.socket.destroy();
      }
    }, ms);
    timer.unref();
    const clear = () => clearTimeout(timer);
    req.once('end', clear);
    res.once('close', clear);
    next();
  };
}

/** One `bytes=` range of a file of `size` bytes: null to send it whole, a 416 when it lies past the end. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (header === undefined) return null;
  const match = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  // Several ranges, or a unit we do not serve: RFC 9110 lets the server send the whole file.
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) throw new RangeNotSatisfiableError(size);
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || (match[2] !== '' && Number(match[2]) < start)) throw new RangeNotSatisfiableError(size);
  return { start, end };
}

/**
 * Downloads (DECISIONS 14), mounted at /files/d: GET and HEAD of a file a reveal handed out, streamed
 * from the store (bounded memory), one Range (206; 416 past the end), 410 after the download window.
 * Each download that starts at the first byte is recorded on the note's receipt (time, client class).
 */
export function createDownloadRoutes(deps: FileRoutesDeps): Router {
  const router = Router();
  const { files } = deps;
  router.use(apiHeaders);
  router.all('/:token', routeName(FILE_ROUTES.download), methodsOnly(['GET']), available(deps), async (req, res) => {
    const download = await files.findDownload(String(req.params.token));
    const gone = () => new NotFoundError('NOT_FOUND', 'No file at this address (unknown, or its note has ended)');
    if (!download) throw gone();
    const stored = await files.storage.stat(download.objectName);
    if (!stored || !stored.complete) throw gone();
    const size = stored.size;
    const range = parseRange(req.get('range'), size);
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Content-Type', 'application/octet-stream');
    res.setHeader('Content-Disposition', 'attachment');
    if (range) {
      res.status(206);
      res.setHeader('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
      res.setHeader('Content-Length', String(range.end - range.start + 1));
    } else {
      res.status(200);
      res.setHeader('Content-Length', String(size));
    }
    if (req.method === 'HEAD' || size === 0) {
      res.end();
      return;
    }
    if (!range || range.start === 0) await files.downloadStarted(download, classifyClient(req.get('user-agent')));
    const body = await files.storage.read(download.objectName, range ?? undefined);
    let sent = 0;
    body.on('data', (chunk: Buffer) => {
      sent += chunk.length;
      transferScavenger.moved(chunk.length); // each read is a fresh Buffer: see TransferScavenger
    });
    try {
      await pipeline(body, res);
    } catch (err) {
      // A reader that went away (or a resumable cut): nothing to answer; the stream is closed.
      if (!res.writableFinished) deps.logger.debug('download ended early', { err: (err as Error).message });
    } finally {
      files.observeBytesOut(sent);
    }
  });
  router.use(noSuchFile('No file at this address (unknown, or its note has ended)'));
  router.use(undecodableAsNotFound);
  router.use(errorHandler(deps.logger.child('notes/files'), deps.outages));
  return router;
}

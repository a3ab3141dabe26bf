import { readFileSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { join } from 'node:path';
import express, { Router, type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import {
  MAX_JSON_BYTES, NoteNotFoundError, DependencyUnavailableError, ValidationError, apiHeaders, apiNotFound, errorHandler,
  formatTimestamp, isUndecodablePath, jsonBody, methodsOnly, routeName, type Logger, type Outages,
} from '@vanish/common';
import { validateCreateNote } from '../domain/create-note-validator';
import type { CreatedNote, NoteMetadata, NotesApi } from '../domain/notes';

/** The repository's OpenAPI document (services/notes/openapi/openapi.json), same path from src/ and dist/. */
export const OPENAPI_DOCUMENT_FILE = join(__dirname, '..', '..', 'openapi', 'openapi.json');

/** DECISIONS 1: lowercase canonical RFC 4122 version 4; anything else cannot be a note. */
const NOTE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Route templates: the only names metrics and access logs ever see (never the uuid). */
export const API_ROUTES = {
  create: '/api/create.php',
  view: '/api/view/:uuid.php',
  openapi: '/api/openapi.json',
} as const;

export interface ApiRoutesDeps {
  notes: NotesApi;
  logger: Logger;
  /** The service's dependencies: a 503 for one that is down is logged as part of its outage. */
  outages?: Outages;
  /**
   * False while the service cannot use its database yet (migrations still waiting for it): note
   * operations answer 503 SERVICE_UNAVAILABLE with Retry-After instead of failing obscurely.
   */
  isAvailable?: () => boolean;
  /** The OpenAPI document as JSON text; read from OPENAPI_DOCUMENT_FILE when not given. */
  openApiDocument?: string;
  /**
   * A metadata read that has not finished by then answers 503 (a stalled database must not hang
   * clients). Default 5000 ms: under the gateway's upstream timeout, so clients see 503, not 504.
   * Creations are bounded by the store instead (KnexNoteStore.insertNew).
   */
  operationTimeoutMs?: number;
}

export const DEFAULT_OPERATION_TIMEOUT_MS = 5_000;

/** Resolves as `work` does, or rejects with 503 SERVICE_UNAVAILABLE once `ms` have passed. */
export function withinDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DependencyUnavailableError('database', 'The note store did not answer in time; retry shortly')), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** SPEC 2.2. */
export function createdBody(note: CreatedNote) {
  return {
    success: true,
    uuid: note.uuid,
    url: note.url,
    expires_at: formatTimestamp(note.expiresAt),
    max_views: note.maxViews,
    has_passcode: note.hasPasscode,
    ...(note.receiptUrl !== undefined ? { receipt_url: note.receiptUrl } : {}),
    // DECISIONS 11 (additive): the note's reference always, the webhook's secret once, with a webhook_url.
    ...(note.noteRef !== undefined ? { note_ref: note.noteRef } : {}),
    ...(note.webhookSecret !== undefined ? { webhook_secret: note.webhookSecret } : {}),
    // DECISIONS 14 (additive): one upload address per declared file, in their order.
    ...(note.uploads !== undefined ? { uploads: note.uploads } : {}),
  };
}

/** SPEC 4.2 with 2.1; destroyed and expired notes never get here (404), so is_destroyed is false. */
export function metadataBody(uuid: string, note: NoteMetadata) {
  return {
    success: true,
    note: {
      uuid,
      has_passcode: note.hasPasscode,
      expiry_type: note.expiryType,
      expires_at: formatTimestamp(note.expiresAt),
      max_views: note.maxViews,
      current_views: note.currentViews,
      is_destroyed: false,
      created_at: formatTimestamp(note.createdAt),
    },
  };
}

/**
 * JSON body parsing as common's jsonBody (content type first, 128 KiB, DECISIONS 4 codes), plus
 * one check: bytes that are not UTF-8 (e.g. a lone surrogate encoded CESU-style) would be silently
 * replaced by U+FFFD while decoding, so they are flagged here and refused as INVALID_JSON.
 */
function strictJsonBody(): RequestHandler[] {
  const [requireJson] = jsonBody();
  const parse = express.json({
    limit: MAX_JSON_BYTES,
    strict: false,
    inflate: false,
    verify: (_req, res, buf, encoding) => {
      if (/^utf-?8$/i.test(encoding ?? 'utf-8') && !isUtf8(buf)) (res as unknown as Response).locals.bodyNotUtf8 = true;
    },
  });
  const refuseNonUtf8: RequestHandler = (_req, res, next) => {
    next(res.locals.bodyNotUtf8 ? new ValidationError('INVALID_JSON', 'Request body is not valid UTF-8 JSON') : undefined);
  };
  return [requireJson!, parse, refuseNonUtf8];
}

/**
 * The public API (SPEC 4.1, 4.2; DECISIONS 4, 8), mounted at /api. Every answer carries the API
 * headers; errors of any kind leave through common's errorHandler in the SPEC 7 body.
 */
export function createApiRoutes(deps: ApiRoutesDeps): Router {
  const router = Router();
  const openApiDocument = deps.openApiDocument ?? readFileSync(OPENAPI_DOCUMENT_FILE, 'utf8');
  const timeoutMs = deps.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  const available: RequestHandler = (_req, _res, next) => {
    next(deps.isAvailable && !deps.isAvailable() ? new DependencyUnavailableError('database', 'The note store is not available yet; retry shortly') : undefined);
  };

  router.use(apiHeaders);

  router.all('/create.php', routeName(API_ROUTES.create), methodsOnly(['POST']), available, ...strictJsonBody(), async (req, res) => {
    const input = validateCreateNote(req.body);
    // No deadline here: the store answers 503 only while a creation's COMMIT has not been sent,
    // and from then on what the database kept (a deadline here would answer 503 for a note that
    // is stored and whose link e-mail goes out).
    const created = await deps.notes.create(input);
    res.status(200).json(createdBody(created));
  });

  router.all('/view/:uuid.php', routeName(API_ROUTES.view), methodsOnly(['GET']), available, async (req, res) => {
    const uuid = String(req.params.uuid);
    if (!NOTE_UUID.test(uuid)) throw new NoteNotFoundError();
    const metadata = await withinDeadline(deps.notes.metadata(uuid), timeoutMs);
    res.status(200).json(metadataBody(uuid, metadata));
  });

  router.all('/openapi.json', routeName(API_ROUTES.openapi), methodsOnly(['GET']), (_req, res) => {
    res.status(200).type('application/json').send(openApiDocument);
  });

  router.use(apiNotFound);
  router.use(malformedPathAsNotFound);
  router.use(errorHandler(deps.logger.child('notes/api'), deps.outages));
  return router;
}

/**
 * Express refuses a path parameter it cannot percent-decode (`/api/view/%E0%A4.php`) with a bare
 * 400 URIError before any route runs, which the handler would otherwise turn into a 500; for the
 * API it is simply a note that cannot exist.
 */
const malformedPathAsNotFound: ErrorRequestHandler = (err, _req, _res, next) => {
  // The view route holds the only path parameter under /api. (Its message quotes the raw value, so
  // it must never reach a log.)
  if (isUndecodablePath(err)) {
    next(new NoteNotFoundError());
    return;
  }
  next(err);
};

import type { Request, Response } from 'express';
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
export declare function sendError(req: Request, res: Response, err: unknown): void;
/** A browser on a web route: it gets a page, never the JSON body. */
export declare function wantsPage(req: Request, res: Response): boolean;

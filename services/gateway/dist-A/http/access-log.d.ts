import type { RequestHandler } from 'express';
import type { Logger } from '@vanish/common';
/**
 * One JSON line per request: id, method, route template, redacted path (no note uuid, no
 * unsubscribe token, no query string), status, duration. Never a body, never a client address.
 */
export declare function accessLog(logger: Logger): RequestHandler;

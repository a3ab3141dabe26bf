import type { RequestHandler } from 'express';
/**
 * CORS for /api only, and only for the origins CORS_ORIGINS lists (DECISIONS 8: off by default).
 * A listed origin is echoed back; any other origin gets no CORS header at all, so the browser
 * refuses to hand it the answer. No credentials: the API has no cookies.
 */
export declare function cors(origins: readonly string[]): RequestHandler;

import type { RequestHandler } from 'express';
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
export declare function bodyGuard(limitBytes?: number): RequestHandler;

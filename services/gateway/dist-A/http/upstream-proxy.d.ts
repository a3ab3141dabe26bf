import type { IncomingHttpHeaders } from 'node:http';
import type { Request, Response, RequestHandler } from 'express';
import type { Dispatcher } from 'undici';
import { type Logger } from '@vanish/common';
export interface UpstreamProxyOptions {
    name: string;
    target: string;
    /** The shared undici Agent (compose.ts): kept-alive upstream connections. */
    dispatcher: Dispatcher;
    timeoutMs: number;
    logger: Logger;
    onUpstreamError?: (upstream: string, code: string) => void;
}
/** The largest upstream 5xx body we read to check its shape. */
export declare const MAX_ERROR_BODY_BYTES: number;
export declare class UpstreamDeadlineError extends Error {
    readonly code = "UPSTREAM_DEADLINE";
}
/** Why the relay cancelled an upstream request whose answer nobody wants any more. */
export declare class ClientGoneError extends Error {
    readonly code = "CLIENT_GONE";
}
/**
 * One upstream, relayed with undici's dispatcher through the shared keep-alive agent (the upstream
 * connection is reused instead of opened per request), a deadline for the upstream's answer (504),
 * refused or broken connections as 502, and answers rewritten on the way out: DECISIONS 8 headers
 * are enforced, hop-by-hop headers dropped, and a 5xx body that is not our error shape (an HTML
 * stack trace, say) is replaced, so no upstream internals ever reach a client.
 *
 * (Until issue 18 this went through http-proxy-middleware, then through node:http's client; undici's
 * dispatcher, driven by a handler that writes straight into our answer, costs about a third less per
 * relayed request: docs/performance.md.)
 */
export declare function createUpstreamProxy(options: UpstreamProxyOptions): RequestHandler;
/** Where an upstream's requests go: its origin, and the path its routes sit under. */
export declare function upstreamTarget(target: string): {
    origin: string;
    pathPrefix: string;
};
/** How a relay answers an upstream that failed: 502, or 504 when timed out; logged and counted. */
export declare function relayFailure(options: UpstreamProxyOptions): RelayFailure;
/** Whether an upstream error means "no answer in time" (504) rather than "no answer" (502). */
export declare function isTimeout(err: Error & {
    code?: string;
}): boolean;
/** The client's request headers minus those of its own connection and body framing (see CLIENT_HOP_HEADERS). */
export declare function upstreamHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]>;
/** The upstream learns who the client is from us alone: a client's own X-Forwarded-* is replaced. */
export declare function forwardedHeaders(req: Request): void;
/** How createUpstreamProxy answers a failed relay (502, or 504 when timed out), logged and counted. */
export type RelayFailure = (req: Request, res: Response, err: Error & {
    code?: string;
}, timedOut: boolean) => void;
/** What undici hands a dispatch handler: how to cancel, pause and resume the upstream answer. */
export type DispatchController = Parameters<NonNullable<Dispatcher.DispatchHandler['onRequestStart']>>[0];
export declare function copyHeaders(headers: IncomingHttpHeaders, res: Response): void;
/**
 * A 5xx passes only when its body is our error shape (re-serialised, so extra fields such as a
 * stack are dropped); anything else (or a body over MAX_ERROR_BODY_BYTES) is replaced by the error
 * its status means.
 */
export declare function relayServerError(rawBody: Buffer | undefined, headers: IncomingHttpHeaders, req: Request, res: Response, logger: Logger, upstream: string, status: number): void;

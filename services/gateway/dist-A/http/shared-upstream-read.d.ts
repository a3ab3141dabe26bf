import type { RequestHandler } from 'express';
import { type UpstreamProxyOptions } from './upstream-proxy';
export interface SharedUpstreamReadOptions extends UpstreamProxyOptions {
    /** Called for each request answered from an upstream read that another request had asked for. */
    onJoined?: (upstream: string) => void;
}
/** The largest answer a shared read holds for its waiters; a larger one fails them all (502). */
export declare const MAX_SHARED_ANSWER_BYTES: number;
/**
 * GETs of a route whose answer is the same for every client (the statistics, SPEC 4.3) share
 * upstream reads, by path and query: the rule is the stats service's own for its store. Nobody gets
 * an answer read before they asked: a request that arrives while a read of its path is under way
 * waits for the next one, which starts when the current one ends and serves everyone who arrived
 * meanwhile. One request at a time is relayed as before; under 50 concurrent clients the upstream
 * sees about two requests per round trip instead of fifty (docs/gateway.md, Shared reads).
 *
 * Each request keeps its own answer: the gateway's headers, request id, limits and access log are
 * its own, and its own deadline (UPSTREAM_TIMEOUT_MS from the moment it reached the relay) answers
 * it 504 whatever the read it waits for does. A read whose waiters have all gone is cancelled.
 */
export declare function createSharedUpstreamRead(options: SharedUpstreamReadOptions): RequestHandler;

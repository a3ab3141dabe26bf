"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.MAX_SHARED_ANSWER_BYTES = void 0;
exports.createSharedUpstreamRead = createSharedUpstreamRead;
const upstream_proxy_1 = require("./upstream-proxy");
const security_headers_1 = require("./security-headers");
/** The largest answer a shared read holds for its waiters; a larger one fails them all (502). */
exports.MAX_SHARED_ANSWER_BYTES = 1024 * 1024;
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
function createSharedUpstreamRead(options) {
    const fail = (0, upstream_proxy_1.relayFailure)(options);
    const { origin, pathPrefix } = (0, upstream_proxy_1.upstreamTarget)(options.target);
    const slots = new Map();
    const start = (slot, key) => {
        const read = slot.current;
        if (!read) {
            slots.delete(key);
            return;
        }
        if (!read.dispatch(options.dispatcher, origin, pathPrefix))
            advance(slot, key);
    };
    const advance = (slot, key) => {
        slot.current = slot.following;
        slot.following = undefined;
        start(slot, key);
    };
    return (req, res) => {
        const key = req.url;
        const slot = slots.get(key) ?? { current: undefined, following: undefined };
        slots.set(key, slot);
        const settled = () => {
            // The next read starts outside undici's callbacks of the one that ended.
            process.nextTick(() => advance(slot, key));
        };
        const read = slot.current ? (slot.following ??= new SharedRead(options.logger, options.name, settled)) : (slot.current = new SharedRead(options.logger, options.name, settled));
        if (read.waiting > 0)
            options.onJoined?.(options.name);
        read.join(new Waiter(req, res, options.timeoutMs, options.logger, options.name, fail, read));
        if (read === slot.current && !read.dispatched)
            start(slot, key);
    };
}
/** One upstream request and the clients waiting for its answer, as undici's dispatch handler. */
class SharedRead {
    logger;
    upstream;
    onSettled;
    waiters = new Set();
    controller;
    dispatched = false;
    settled = false;
    status = 0;
    headers = {};
    chunks = [];
    bytes = 0;
    constructor(logger, upstream, onSettled) {
        this.logger = logger;
        this.upstream = upstream;
        this.onSettled = onSettled;
    }
    get waiting() {
        return this.waiters.size;
    }
    join(waiter) {
        this.waiters.add(waiter);
    }
    /** A waiter answered by its own deadline, or whose client went away; the last one out cancels the read. */
    leave(waiter) {
        this.waiters.delete(waiter);
        if (this.waiters.size > 0 || !this.dispatched || this.settled)
            return;
        const reason = new upstream_proxy_1.ClientGoneError('every waiting client has gone');
        this.settle({ kind: 'failed', err: reason, timedOut: false });
        if (this.controller && !this.controller.aborted)
            this.controller.abort(reason);
    }
    /** Sends the request of the first client still waiting; false when nobody waits any more. */
    dispatch(dispatcher, origin, pathPrefix) {
        const first = this.waiters.values().next().value;
        if (!first)
            return false;
        this.dispatched = true;
        const { req } = first;
        (0, upstream_proxy_1.forwardedHeaders)(req);
        try {
            dispatcher.dispatch({ origin, path: pathPrefix + req.url, method: 'GET', headers: (0, upstream_proxy_1.upstreamHeaders)(req.headers), body: null }, this);
        }
        catch (err) {
            // undici refuses some paths and header values that the client's request carried.
            this.settle({ kind: 'failed', err: err, timedOut: false });
        }
        return true;
    }
    onRequestStart(controller) {
        this.controller = controller;
        if (this.settled)
            controller.abort(new upstream_proxy_1.ClientGoneError('every waiting client has gone'));
    }
    onResponseStart(_controller, statusCode, headers) {
        if (statusCode < 200 || this.settled)
            return;
        this.status = statusCode;
        this.headers = headers;
    }
    onResponseData(controller, chunk) {
        if (this.settled)
            return;
        this.bytes += chunk.length;
        if (this.bytes <= exports.MAX_SHARED_ANSWER_BYTES) {
            this.chunks.push(chunk);
            return;
        }
        this.logger.warn('upstream answer too large to share; its waiters get 502', { upstream: this.upstream, limit: exports.MAX_SHARED_ANSWER_BYTES });
        const err = Object.assign(new Error('shared answer too large'), { code: 'SHARED_ANSWER_TOO_LARGE' });
        this.settle({ kind: 'failed', err, timedOut: false });
        controller.abort(err);
    }
    onResponseEnd() {
        this.settle({ kind: 'answer', status: this.status, headers: this.headers, body: Buffer.concat(this.chunks, this.bytes) });
    }
    onResponseError(_controller, err) {
        this.settle({ kind: 'failed', err, timedOut: (0, upstream_proxy_1.isTimeout)(err) });
    }
    settle(outcome) {
        if (this.settled)
            return;
        this.settled = true;
        for (const waiter of this.waiters)
            waiter.answer(outcome);
        this.waiters.clear();
        this.onSettled();
    }
}
/** One client waiting for a shared read: answered from it, or by its own deadline, once. */
class Waiter {
    req;
    res;
    logger;
    upstream;
    fail;
    read;
    done = false;
    deadline;
    constructor(req, res, timeoutMs, logger, upstream, fail, read) {
        this.req = req;
        this.res = res;
        this.logger = logger;
        this.upstream = upstream;
        this.fail = fail;
        this.read = read;
        this.deadline = setTimeout(() => {
            if (this.done)
                return;
            this.done = true;
            this.read.leave(this);
            this.answering(() => this.fail(req, res, new upstream_proxy_1.UpstreamDeadlineError('upstream deadline'), true));
        }, timeoutMs);
        res.once('close', () => {
            clearTimeout(this.deadline);
            if (this.done)
                return;
            this.done = true;
            this.read.leave(this);
        });
    }
    answer(outcome) {
        if (this.done)
            return;
        this.done = true;
        clearTimeout(this.deadline);
        const { req, res } = this;
        this.answering(() => {
            if (outcome.kind === 'failed') {
                this.fail(req, res, outcome.err, outcome.timedOut);
                return;
            }
            if (outcome.status >= 500) {
                (0, upstream_proxy_1.relayServerError)(outcome.body, outcome.headers, req, res, this.logger, this.upstream, outcome.status);
                return;
            }
            (0, upstream_proxy_1.copyHeaders)(outcome.headers, res);
            (0, security_headers_1.applyAnswerHeaders)(req, res);
            res.status(outcome.status).end(outcome.body);
        });
    }
    /** As the relay's: a failure while answering cuts this client's connection, logged, and touches no other waiter. */
    answering(answer) {
        try {
            answer();
        }
        catch (err) {
            this.logger.error('the relay could not answer; connection cut', { requestId: this.res.locals?.requestId, upstream: this.upstream, err: err.message });
            this.res.destroy();
        }
    }
}
//# sourceMappingURL=shared-upstream-read.js.map
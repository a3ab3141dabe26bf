import type { IncomingHttpHeaders } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { Dispatcher } from 'undici';
import type { Logger } from '@vanish/common';
import {
  answerOrCut,
  ClientGoneError,
  copyHeaders,
  forwardedHeaders,
  isTimeout,
  relayFailure,
  relayServerError,
  upstreamHeaders,
  upstreamTarget,
  UpstreamDeadlineError,
  type DispatchController,
  type RelayFailure,
  type UpstreamProxyOptions,
} from './upstream-proxy';

export interface SharedUpstreamReadOptions extends UpstreamProxyOptions {
  /** Called for each request answered from an upstream read that another request had asked for. */
  onJoined?: (upstream: string) => void;
}

/** The largest answer a shared read holds for its waiters; a larger one fails them all (502). */
export const MAX_SHARED_ANSWER_BYTES = 1024 * 1024;

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
export function createSharedUpstreamRead(options: SharedUpstreamReadOptions): RequestHandler {
  const fail = relayFailure(options);
  const { origin, pathPrefix } = upstreamTarget(options.target);
  const slots = new Map<string, ReadSlot>();

  const start = (slot: ReadSlot, key: string): void => {
    const read = slot.current;
    if (!read) {
      slots.delete(key);
      return;
    }
    if (!read.dispatch(options.dispatcher, origin, pathPrefix)) advance(slot, key);
  };

  const advance = (slot: ReadSlot, key: string): void => {
    slot.current = slot.following;
    slot.following = undefined;
    start(slot, key);
  };

  return (req, res) => {
    const key = req.url;
    const slot = slots.get(key) ?? { current: undefined, following: undefined };
    slots.set(key, slot);
    const settled = (): void => {
      // The next read starts outside undici's callbacks of the one that ended.
      process.nextTick(() => advance(slot, key));
    };
    const read = slot.current ? (slot.following ??= new SharedRead(options.logger, options.name, settled)) : (slot.current = new SharedRead(options.logger, options.name, settled));
    if (read.waiting > 0) options.onJoined?.(options.name);
    read.join(new Waiter(req, res, options.timeoutMs, options.logger, options.name, fail, read));
    if (read === slot.current && !read.dispatched) start(slot, key);
  };
}

interface ReadSlot {
  /** The read under way (dispatched upstream). */
  current: SharedRead | undefined;
  /** The read that starts when the current one ends: everyone who arrived meanwhile. */
  following: SharedRead | undefined;
}

type Outcome =
  | { kind: 'answer'; status: number; headers: IncomingHttpHeaders; body: Buffer }
  | { kind: 'failed'; err: Error & { code?: string }; timedOut: boolean };

/** One upstream request and the clients waiting for its answer, as undici's dispatch handler. */
class SharedRead implements Dispatcher.DispatchHandler {
  private readonly waiters = new Set<Waiter>();
  private controller: DispatchController | undefined;
  dispatched = false;
  private settled = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly logger: Logger, private readonly upstream: string, private readonly onSettled: () => void) {}

  get waiting(): number {
    return this.waiters.size;
  }

  join(waiter: Waiter): void {
    this.waiters.add(waiter);
  }

  /** A waiter answered by its own deadline, or whose client went away; the last one out cancels the read. */
  leave(waiter: Waiter): void {
    this.waiters.delete(waiter);
    if (this.waiters.size > 0 || !this.dispatched || this.settled) return;
    const reason = new ClientGoneError('every waiting client has gone');
    this.settle({ kind: 'failed', err: reason, timedOut: false });
    if (this.controller && !this.controller.aborted) this.controller.abort(reason);
  }

  /** Sends the request of the first client still waiting; false when nobody waits any more. */
  dispatch(dispatcher: Dispatcher, origin: string, pathPrefix: string): boolean {
    const first = this.waiters.values().next().value;
    if (!first) return false;
    this.dispatched = true;
    const { req } = first;
    forwardedHeaders(req);
    try {
      dispatcher.dispatch({ origin, path: pathPrefix + req.url, method: 'GET', headers: upstreamHeaders(req.headers), body: null }, this);
    } catch (err) {
      // undici refuses some paths and header values that the client's request carried.
      this.settle({ kind: 'failed', err: err as Error, timedOut: false });
    }
    return true;
  }

  onRequestStart(controller: DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new ClientGoneError('every waiting client has gone'));
  }

  onResponseStart(_controller: DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200 || this.settled) return;
    this.status = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.bytes += chunk.length;
    if (this.bytes <= MAX_SHARED_ANSWER_BYTES) {
      this.chunks.push(chunk);
      return;
    }
    this.logger.warn('upstream answer too large to share; its waiters get 502', { upstream: this.upstream, limit: MAX_SHARED_ANSWER_BYTES });
    const err = Object.assign(new Error('shared answer too large'), { code: 'SHARED_ANSWER_TOO_LARGE' });
    this.settle({ kind: 'failed', err, timedOut: false });
    controller.abort(err);
  }

  onResponseEnd(): void {
    this.settle({ kind: 'answer', status: this.status, headers: this.headers, body: Buffer.concat(this.chunks, this.bytes) });
  }

  onResponseError(_controller: DispatchController | undefined, err: Error & { code?: string }): void {
    this.settle({ kind: 'failed', err, timedOut: isTimeout(err) });
  }

  private settle(outcome: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    for (const waiter of this.waiters) waiter.answer(outcome);
    this.waiters.clear();
    this.onSettled();
  }
}

/** One client waiting for a shared read: answered from it, or by its own deadline, once. */
class Waiter {
  private done = false;
  private readonly deadline: NodeJS.Timeout;

  constructor(
    readonly req: Request,
    private readonly res: Response,
    timeoutMs: number,
    private readonly logger: Logger,
    private readonly upstream: string,
    private readonly fail: RelayFailure,
    private readonly read: SharedRead,
  ) {
    this.deadline = setTimeout(() => {
      if (this.done) return;
      this.done = true;
      this.read.leave(this);
      this.answering(() => this.fail(req, res, new UpstreamDeadlineError('upstream deadline'), true));
    }, timeoutMs);
    res.once('close', () => {
      clearTimeout(this.deadline);
      if (this.done) return;
      this.done = true;
      this.read.leave(this);
    });
  }

  answer(outcome: Outcome): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.deadline);
    const { req, res } = this;
    this.answering(() => {
      if (outcome.kind === 'failed') {
        this.fail(req, res, outcome.err, outcome.timedOut);
        return;
      }
      if (outcome.status >= 500) {
        relayServerError(outcome.body, outcome.headers, req, res, this.logger, this.upstream, outcome.status);
        return;
      }
      copyHeaders(outcome.headers, res);
      res.status(outcome.status).end(outcome.body);
    });
  }

  /** A failure while answering cuts this client's connection, logged, and touches no other waiter. */
  private answering(answer: () => void): void {
    answerOrCut(this.res, this.logger, this.upstream, answer);
  }
}

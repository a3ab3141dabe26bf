import type { IncomingHttpHeaders } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { Dispatcher } from 'undici';
import { GroupCommit, type Logger } from '@vanish/common';
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
  /** Called per read with the number of its clients beyond the first, who sent no request of their own. */
  onJoined?: (upstream: string, count: number) => void;
}

/** The largest answer a shared read holds for its waiters; a larger one fails them all (502). */
export const MAX_SHARED_ANSWER_BYTES = 1024 * 1024;

/**
 * GETs of a route whose answer is the same for every client (the statistics, SPEC 4.3) share
 * upstream reads, by path (a GET with a query string is relayed on its own). They are batched by
 * common's GroupCommit, the rule the stats service keeps for its store: nobody gets an answer read
 * before they asked; a request that arrives while a read of its path is under way waits for the
 * next one, which starts when the current one ends and serves everyone who arrived meanwhile. One
 * request at a time is relayed as before; under 50 concurrent clients the upstream sees about two
 * requests per round trip instead of fifty (docs/gateway.md, Shared reads).
 *
 * Each request keeps its own answer: the gateway's headers, request id, limits and access log are
 * its own, and its own deadline (UPSTREAM_TIMEOUT_MS from the moment it reached the relay) answers
 * it 504 whatever the read it waits for does. A read whose waiters have all gone is cancelled.
 */
export function createSharedUpstreamRead(options: SharedUpstreamReadOptions): RequestHandler {
  const fail = relayFailure(options);
  const { origin, pathPrefix } = upstreamTarget(options.target);
  const readOnce = async (waiters: readonly Waiter[]): Promise<Outcome[]> => {
    const outcome = await new SharedRead(options).run(waiters, origin, pathPrefix);
    return waiters.map(() => outcome);
  };
  // By path: the routes that share reads have fixed paths (route-table.ts), so this holds one entry per route.
  const reads = new Map<string, GroupCommit<Waiter, Outcome>>();
  const readsOf = (path: string): GroupCommit<Waiter, Outcome> => {
    let group = reads.get(path);
    if (!group) {
      group = new GroupCommit(readOnce, { maxItems: Number.MAX_SAFE_INTEGER });
      reads.set(path, group);
    }
    return group;
  };

  return (req, res) => {
    const waiter = new Waiter(req, res, options.timeoutMs, options.logger, options.name, fail);
    readsOf(req.path).add(waiter).then(
      (outcome) => waiter.answer(outcome),
      (err: Error) => waiter.answer({ kind: 'failed', err, timedOut: false }),
    );
  };
}

type Outcome =
  | { kind: 'answer'; status: number; headers: IncomingHttpHeaders; body: Buffer }
  | { kind: 'failed'; err: Error & { code?: string }; timedOut: boolean };

/** One upstream request for the clients of one batch still waiting, as undici's dispatch handler. */
class SharedRead implements Dispatcher.DispatchHandler {
  private readonly waiters = new Set<Waiter>();
  private controller: DispatchController | undefined;
  private settled = false;
  private resolve: (outcome: Outcome) => void = () => undefined;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly options: SharedUpstreamReadOptions) {}

  /** Sends the request of the batch's first client still waiting, and settles with the upstream's answer. */
  run(batch: readonly Waiter[], origin: string, pathPrefix: string): Promise<Outcome> {
    return new Promise((resolve) => {
      this.resolve = resolve;
      for (const waiter of batch) if (waiter.waitFor(this)) this.waiters.add(waiter);
      const first = this.waiters.values().next().value;
      if (!first) {
        this.settle({ kind: 'failed', err: new ClientGoneError('every waiting client has gone'), timedOut: false });
        return;
      }
      if (this.waiters.size > 1) this.options.onJoined?.(this.options.name, this.waiters.size - 1);
      const { req } = first;
      forwardedHeaders(req);
      try {
        this.options.dispatcher.dispatch({
          origin, path: pathPrefix + req.url, method: 'GET', headers: upstreamHeaders(req.headers), body: null, blocking: !this.options.pipelined,
        }, this);
      } catch (err) {
        // undici refuses some paths and header values that the client's request carried.
        this.settle({ kind: 'failed', err: err as Error, timedOut: false });
      }
    });
  }

  /** A waiter answered by its own deadline, or whose client went away; the last one out cancels the read. */
  leave(waiter: Waiter): void {
    this.waiters.delete(waiter);
    if (this.waiters.size > 0 || this.settled) return;
    const reason = new ClientGoneError('every waiting client has gone');
    this.settle({ kind: 'failed', err: reason, timedOut: false });
    if (this.controller && !this.controller.aborted) this.controller.abort(reason);
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
    this.options.logger.warn('upstream answer too large to share; its waiters get 502', { upstream: this.options.name, limit: MAX_SHARED_ANSWER_BYTES });
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
    this.resolve(outcome);
  }
}

/** One client waiting for a shared read: answered from it, or by its own deadline, once. */
class Waiter {
  private done = false;
  /** The read this client waits for, once its batch has started. */
  private read: SharedRead | undefined;
  private readonly deadline: NodeJS.Timeout;

  constructor(
    readonly req: Request,
    private readonly res: Response,
    timeoutMs: number,
    private readonly logger: Logger,
    private readonly upstream: string,
    private readonly fail: RelayFailure,
  ) {
    this.deadline = setTimeout(() => {
      if (this.done) return;
      this.done = true;
      this.read?.leave(this);
      this.answering(() => this.fail(req, res, new UpstreamDeadlineError('upstream deadline'), true));
    }, timeoutMs);
    res.once('close', () => {
      clearTimeout(this.deadline);
      if (this.done) return;
      this.done = true;
      this.read?.leave(this);
    });
  }

  /** Called when this client's batch starts; false when it has been answered or has gone already. */
  waitFor(read: SharedRead): boolean {
    if (this.done) return false;
    this.read = read;
    return true;
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

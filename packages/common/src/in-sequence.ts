import type { RequestHandler } from 'express';

/**
 * Middleware run one after the other inside a single express layer, with express's own contract:
 * `next()` goes on, `next(err)` (or a thrown error, or a rejected promise) goes to the error handler,
 * and a step that answers simply does not call `next`. As in an express middleware layer,
 * `next('route')` goes on like `next()`, and `next('router')` leaves the sequence as it leaves a router.
 */
export function inSequence(steps: readonly RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (err?: unknown): void => {
      if (err === 'router') {
        done(err);
        return;
      }
      if (err !== undefined && err !== null && err !== 'route') {
        done(err);
        return;
      }
      const step = steps[index];
      index += 1;
      if (!step) {
        done();
        return;
      }
      try {
        const result = step(req, res, next) as unknown;
        // express 5 turns a promise rejected without a reason into an error, never a success.
        if (result instanceof Promise) result.catch((reason: unknown) => done(reason || new Error('Rejected promise')));
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}

import type { RequestHandler } from 'express';

/**
 * Middleware run one after the other inside a single express layer, with express's own contract:
 * `next()` goes on, `next(err)` (or a thrown error, or a rejected promise) goes to the error handler,
 * and a step that answers simply does not call `next`.
 */
export function inSequence(steps: readonly RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (err?: unknown): void => {
      if (err !== undefined && err !== null) {
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
        if (result instanceof Promise) result.catch(done);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}

import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { inSequence } from './in-sequence';

const req = {} as Request;
const res = {} as Response;

function run(steps: RequestHandler[]): Promise<{ ran: string[]; done: unknown[] }> {
  const ran: string[] = [];
  return new Promise((resolve) => {
    const done: NextFunction = (...args: unknown[]) => resolve({ ran, done: args });
    const named = steps.map((step, i): RequestHandler => (rq, rs, next) => { ran.push(`s${i}`); return step(rq, rs, next); });
    inSequence(named)(req, res, done);
    setTimeout(() => resolve({ ran, done: ['not called'] }), 50);
  });
}

describe('inSequence', () => {
  it('when every step calls next, then they run in order and the chain ends in the outer next without an error', async () => {
    const go: RequestHandler = (_q, _s, next) => next();
    await expect(run([go, go, go])).resolves.toEqual({ ran: ['s0', 's1', 's2'], done: [] });
  });

  it('when a step passes an error, throws, or rejects, then later steps do not run and the outer next gets the error', async () => {
    const go: RequestHandler = (_q, _s, next) => next();
    const err = new Error('refused');
    await expect(run([go, (_q, _s, next) => next(err), go])).resolves.toEqual({ ran: ['s0', 's1'], done: [err] });
    await expect(run([() => { throw err; }, go])).resolves.toEqual({ ran: ['s0'], done: [err] });
    await expect(run([go, async () => { throw err; }, go])).resolves.toEqual({ ran: ['s0', 's1'], done: [err] });
  });

  it("when a step calls next('route'), then the sequence goes on as in an express middleware layer; next('router') leaves it", async () => {
    const go: RequestHandler = (_q, _s, next) => next();
    await expect(run([(_q, _s, next) => next('route'), go])).resolves.toEqual({ ran: ['s0', 's1'], done: [] });
    await expect(run([(_q, _s, next) => next('router'), go])).resolves.toEqual({ ran: ['s0'], done: ['router'] });
  });

  it('when a step rejects without a reason, then the outer next gets an error, not a success', async () => {
    const go: RequestHandler = (_q, _s, next) => next();
    const outcome = await run([async () => Promise.reject(undefined), go]);
    expect(outcome.ran).toEqual(['s0']);
    expect(outcome.done).toEqual([new Error('Rejected promise')]);
  });

  it('when an async step calls next later, then the chain goes on from there; a step that answers ends it', async () => {
    const later: RequestHandler = (_q, _s, next) => { setTimeout(() => next(), 5); };
    const go: RequestHandler = (_q, _s, next) => next();
    await expect(run([later, go])).resolves.toEqual({ ran: ['s0', 's1'], done: [] });
    await expect(run([go, () => undefined, go])).resolves.toEqual({ ran: ['s0', 's1'], done: ['not called'] });
  });
});

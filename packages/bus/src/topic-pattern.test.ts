import { topicMatches } from './topic-pattern';
import { decideOutcome } from './delivery-policy';
import { PermanentMessageFailure, RetryMessageLater } from '@vanish/common';

describe('topicMatches', () => {
  it.each([
    ['note.*', 'note.created', true],
    ['note.*', 'note.a.b', false],
    ['note.*', 'note', false],
    ['note.#', 'note', true],
    ['note.#', 'note.a.b', true],
    ['#', 'anything.at.all', true],
    ['health.*', 'note.created', false],
    ['*.created', 'note.created', true],
    ['a.#.z', 'a.z', true],
    ['a.#.z', 'a.b.c.z', true],
    ['a.#.z', 'a.b.c', false],
  ])('when pattern %s meets %s, then it matches: %s', (pattern, key, expected) => {
    expect(topicMatches(pattern, key)).toBe(expected);
  });
});

describe('decideOutcome', () => {
  const options = { queue: 'q', bindings: [], maxAttempts: 3, retryDelaysMs: [10, 20] };
  it('when the handler succeeded, then the message is acked', () => {
    expect(decideOutcome(undefined, 1, options)).toEqual({ kind: 'ack' });
  });
  it('when a plain error happens before maxAttempts, then it is retried with the delay for that attempt, the last delay repeating', () => {
    expect(decideOutcome(new Error('x'), 1, options)).toEqual({ kind: 'retry', delayMs: 10 });
    expect(decideOutcome(new Error('x'), 2, { ...options, maxAttempts: 9 })).toEqual({ kind: 'retry', delayMs: 20 });
    expect(decideOutcome(new Error('x'), 5, { ...options, maxAttempts: 9 })).toEqual({ kind: 'retry', delayMs: 20 });
  });
  it('when RetryMessageLater names a delay, then that delay is used', () => {
    expect(decideOutcome(new RetryMessageLater('later', 777), 1, options)).toEqual({ kind: 'retry', delayMs: 777 });
  });
  it('when the last attempt fails, then the message is dead-lettered', () => {
    expect(decideOutcome(new RetryMessageLater('later'), 3, options)).toMatchObject({ kind: 'dead-letter', reason: 'max-attempts' });
  });
  it('when the failure is permanent, then the message is dead-lettered on the first attempt', () => {
    expect(decideOutcome(new PermanentMessageFailure('bad'), 1, options)).toMatchObject({ kind: 'dead-letter', reason: 'permanent' });
  });
});

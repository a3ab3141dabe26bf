import { waitFor } from './net';

describe('waitFor', () => {
  it('when the predicate becomes truthy, then it resolves with its value', async () => {
    let calls = 0;
    const value = await waitFor(() => (++calls >= 3 ? `done after ${calls}` : undefined), { intervalMs: 1 });
    expect(value).toBe('done after 3');
  });

  it('when the predicate throws for a while, then that counts as not yet', async () => {
    let calls = 0;
    const value = await waitFor(async () => {
      if (++calls < 3) throw new Error('not yet');
      return calls;
    }, { intervalMs: 1 });
    expect(value).toBe(3);
  });

  it('when it never holds, then it rejects after the bound, naming the condition and the last error', async () => {
    await expect(
      waitFor(() => { throw new Error('still down'); }, { timeoutMs: 30, intervalMs: 5, description: 'the database' }),
    ).rejects.toThrow('waitFor: the database not met within 30 ms (last error: still down)');
  });
});

import { AppError, ServiceUnavailableError } from './errors';
import { GroupCommit } from './group-commit';

/** A commit function the test controls: it records each batch and waits until released. */
function controlledCommit(failWhen: (items: readonly string[]) => Error | undefined = () => undefined) {
  const batches: string[][] = [];
  const releases: Array<() => void> = [];
  const commit = (items: readonly string[]): Promise<void> => {
    batches.push([...items]);
    return new Promise<void>((resolve, reject) => {
      releases.push(() => {
        const err = failWhen(items);
        if (err) reject(err);
        else resolve();
      });
    });
  };
  const releaseNext = async (): Promise<void> => {
    releases.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { batches, commit, releaseNext };
}

// The notes store's policy: a refused batch is retried item by item, an unavailable database is not.
const limits = {
  maxItems: 3,
  maxBytes: 100,
  sizeOf: (item: string) => item.length,
  retryEachAlone: (err: unknown) => !(err instanceof AppError && err.statusCode === 503),
};
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** The state of each promise, without waiting for it. */
function track(promises: Array<Promise<void>>) {
  const states: string[] = promises.map(() => 'pending');
  promises.forEach((p, i) => p.then(() => { states[i] = 'ok'; }, (err: Error) => { states[i] = `failed: ${err.message}`; }));
  return states;
}

describe('GroupCommit', () => {
  it('when one item arrives alone, then it is committed at once, by itself', async () => {
    const { batches, commit, releaseNext } = controlledCommit();
    const group = new GroupCommit(commit, limits);
    const done = group.add('a');
    expect(batches).toEqual([['a']]);
    await releaseNext();
    await expect(done).resolves.toBeUndefined();
  });

  it('when items arrive during a commit, then the next commit takes them together, and each settles only with its own commit', async () => {
    const { batches, commit, releaseNext } = controlledCommit();
    const group = new GroupCommit(commit, limits);
    const states = track([group.add('a'), group.add('b'), group.add('c')]);
    await settle();
    expect(batches).toEqual([['a']]);
    expect(states).toEqual(['pending', 'pending', 'pending']);
    await releaseNext();
    expect(states).toEqual(['ok', 'pending', 'pending']);
    expect(batches).toEqual([['a'], ['b', 'c']]);
    await releaseNext();
    expect(states).toEqual(['ok', 'ok', 'ok']);
  });

  it('when more is waiting than a batch may hold, then batches are cut by count and by bytes; one oversized item goes alone', async () => {
    const { batches, commit, releaseNext } = controlledCommit();
    const group = new GroupCommit(commit, limits);
    const big = 'x'.repeat(150);
    const states = track(['first', 'a', 'b', 'c', 'd', 'y'.repeat(60), 'z'.repeat(60), big, 'e'].map((item) => group.add(item)));
    for (let i = 0; i < 6; i += 1) await releaseNext();
    expect(batches).toEqual([['first'], ['a', 'b', 'c'], ['d', 'y'.repeat(60)], ['z'.repeat(60)], [big], ['e']]);
    expect(states.every((state) => state === 'ok')).toBe(true);
  });

  it('when the database refuses a batch, then each item is tried alone and only the bad one fails', async () => {
    const { batches, commit, releaseNext } = controlledCommit((items) => (items.includes('bad') ? new Error('duplicate key') : undefined));
    const group = new GroupCommit(commit, limits);
    const states = track([group.add('first'), group.add('a'), group.add('bad'), group.add('b')]);
    for (let i = 0; i < 5; i += 1) await releaseNext();
    expect(batches).toEqual([['first'], ['a', 'bad', 'b'], ['a'], ['bad'], ['b']]);
    expect(states).toEqual(['ok', 'ok', 'failed: duplicate key', 'ok']);
  });

  it('when the database is unavailable (503), then the whole batch fails at once, without a retry per item', async () => {
    let down = false;
    const { batches, commit, releaseNext } = controlledCommit(() => (down ? new ServiceUnavailableError('Database unavailable') : undefined));
    const group = new GroupCommit(commit, limits);
    const states = track([group.add('first'), group.add('a'), group.add('b')]);
    await settle();
    down = true;
    await releaseNext();
    await releaseNext();
    expect(batches).toEqual([['first'], ['a', 'b']]);
    expect(states).toEqual(['failed: Database unavailable', 'failed: Database unavailable', 'failed: Database unavailable']);
    // Up again: the next item commits normally.
    down = false;
    const later = group.add('c');
    await releaseNext();
    await expect(later).resolves.toBeUndefined();
  });

  it('when commit answers one result per item, then each caller gets its own; without retryEachAlone a failed batch fails whole', async () => {
    let fail = false;
    const seen: string[][] = [];
    const group = new GroupCommit<string, number>(async (items) => {
      seen.push([...items]);
      if (fail) throw new Error('refused');
      return items.map((item) => item.length);
    }, { maxItems: 10 });
    await expect(Promise.all([group.add('a'), group.add('bb'), group.add('ccc')])).resolves.toEqual([1, 2, 3]);
    expect(seen).toEqual([['a'], ['bb', 'ccc']]);
    fail = true;
    const outcomes = await Promise.allSettled([group.add('x'), group.add('y'), group.add('z')]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(seen.slice(2)).toEqual([['x'], ['y', 'z']]);
  });

  describe('with lingerMs', () => {
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('when items trickle in, then they wait out the linger of the oldest item and go out in one batch', async () => {
      const { batches, commit, releaseNext } = controlledCommit();
      const group = new GroupCommit(commit, { maxItems: 10, lingerMs: 80 });
      const done = [group.add('a')];
      await sleep(10);
      done.push(group.add('b'), group.add('c'));
      await sleep(20);
      expect(batches).toEqual([]);
      await sleep(120);
      expect(batches).toEqual([['a', 'b', 'c']]);
      await releaseNext();
      await expect(Promise.all(done)).resolves.toHaveLength(3);
    });

    it('when maxItems are waiting, then the batch goes at once without waiting out the linger', async () => {
      const { batches, commit, releaseNext } = controlledCommit();
      const group = new GroupCommit(commit, { maxItems: 3, lingerMs: 60_000 });
      const done = [group.add('a'), group.add('b'), group.add('c')];
      await settle();
      expect(batches).toEqual([['a', 'b', 'c']]);
      await releaseNext();
      await expect(Promise.all(done)).resolves.toHaveLength(3);
    });

    it('when items arrive while a batch commits, then the next batch waits only what is left of their linger', async () => {
      const { batches, commit, releaseNext } = controlledCommit();
      const group = new GroupCommit(commit, { maxItems: 10, lingerMs: 40 });
      const first = group.add('a');
      await sleep(60);
      expect(batches).toEqual([['a']]);
      const second = group.add('b');
      await sleep(60); // b's linger passes while a's commit is still under way
      await releaseNext();
      expect(batches).toEqual([['a'], ['b']]);
      await releaseNext();
      await expect(Promise.all([first, second])).resolves.toHaveLength(2);
    });
  });
});

import { PeriodicTask } from './periodic-task';

describe('PeriodicTask', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('when a run outlasts the interval, then the next ticks skip instead of starting a second run, and stop waits for it', async () => {
    let active = 0;
    let most = 0;
    let runs = 0;
    let finish: () => void = () => undefined;
    const task = new PeriodicTask(async () => {
      runs += 1;
      active += 1;
      most = Math.max(most, active);
      await new Promise<void>((resolve) => { finish = resolve; });
      active -= 1;
    }, 100);
    task.start();
    task.start(); // a second start changes nothing
    await jest.advanceTimersByTimeAsync(550);
    expect({ runs, most }).toEqual({ runs: 1, most: 1 });
    let stopped = false;
    const stopping = task.stop().then(() => { stopped = true; });
    await Promise.resolve();
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(active).toBe(0);
    await jest.advanceTimersByTimeAsync(500);
    expect(runs).toBe(1);
  });

  it('when runs are quick, then one starts every interval until stop', async () => {
    let runs = 0;
    const task = new PeriodicTask(async () => { runs += 1; }, 100);
    task.start();
    await jest.advanceTimersByTimeAsync(350);
    await task.stop();
    await jest.advanceTimersByTimeAsync(350);
    expect(runs).toBe(3);
  });
});

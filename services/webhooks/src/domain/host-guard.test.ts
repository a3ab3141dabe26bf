import { HostGuard } from './host-guard';
import { JITTER_FACTORS, maxAttempts, retryDelayMs } from './retry-schedule';

describe('HostGuard', () => {
  it('when a host has as many requests in flight as the cap, then the next is turned away at once and another host is not', () => {
    const guard = new HostGuard({ concurrency: 2, failureThreshold: 5, openMs: 1000 });
    const a = guard.admit('slow:443');
    const b = guard.admit('slow:443');
    expect(a.admitted && b.admitted).toBe(true);
    expect(guard.admit('slow:443')).toEqual({ admitted: false, reason: 'host_busy' });
    expect(guard.admit('fast:443').admitted).toBe(true);
  });

  it('when a host fails as often as the threshold, then its circuit opens for openMs and then lets one trial through', () => {
    let now = 0;
    const guard = new HostGuard({ concurrency: 10, failureThreshold: 2, openMs: 1000, now: () => now });
    for (let i = 0; i < 2; i += 1) {
      const admission = guard.admit('dead:443');
      if (admission.admitted) admission.release(false);
    }
    expect(guard.admit('dead:443')).toEqual({ admitted: false, reason: 'circuit_open' });
    expect(guard.openCircuits()).toBe(1);
    now = 1001;
    const trial = guard.admit('dead:443');
    expect(trial.admitted).toBe(true);
    expect(guard.admit('dead:443')).toEqual({ admitted: false, reason: 'circuit_open' });
    if (trial.admitted) trial.release(true);
    expect(guard.openCircuits()).toBe(0);
    expect(guard.admit('dead:443').admitted).toBe(true);
  });
});

describe('HostGuard.acquire', () => {
  it('when a busy host frees a slot, then a waiting request gets it; past the waiters\' cap or the wait, requests are turned away', async () => {
    const guard = new HostGuard({ concurrency: 1, failureThreshold: 5, openMs: 1000 });
    const held = guard.admit('h:1');
    const waiting = guard.acquire('h:1', 5_000);
    expect(await guard.acquire('h:1', 5_000)).toEqual({ admitted: false, reason: 'host_busy' }); // one waiter per slot
    if (held.admitted) held.release(true);
    const admitted = await waiting;
    expect(admitted.admitted).toBe(true);
    expect(await guard.acquire('h:1', 20)).toEqual({ admitted: false, reason: 'host_busy' }); // waited, not freed
    if (admitted.admitted) admitted.release(true);
  });

  it('when maxWaiting is set, then that many requests wait for a busy host\'s slot, in order, and the next is turned away', async () => {
    const guard = new HostGuard({ concurrency: 1, maxWaiting: 3, failureThreshold: 5, openMs: 1000 });
    const held = guard.admit('h:1');
    const order: number[] = [];
    const waiting = [1, 2, 3].map((n) => guard.acquire('h:1', 5_000).then((admission) => {
      order.push(n);
      if (admission.admitted) admission.release(true);
      return admission.admitted;
    }));
    expect(await guard.acquire('h:1', 5_000)).toEqual({ admitted: false, reason: 'host_busy' });
    if (held.admitted) held.release(true);
    await expect(Promise.all(waiting)).resolves.toEqual([true, true, true]);
    expect(order).toEqual([1, 2, 3]);
  });
});

describe('retry schedule', () => {
  it('when attempts fail, then the delays follow the schedule within the jitter factors and the last repeats', () => {
    const delays = [1000, 5000];
    expect(maxAttempts(delays)).toBe(3);
    expect(retryDelayMs(delays, 1, () => 0)).toBe(850);
    expect(retryDelayMs(delays, 2, () => 0.99)).toBe(5750);
    expect(retryDelayMs(delays, 7, () => 0.5)).toBe(5250);
    const seen = new Set(Array.from({ length: 200 }, () => retryDelayMs(delays, 1)));
    expect(seen.size).toBeLessThanOrEqual(JITTER_FACTORS.length);
  });
});

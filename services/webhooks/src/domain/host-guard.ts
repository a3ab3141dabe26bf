/**
 * Per receiver host (host:port): a cap on requests in flight and a circuit breaker, so that one slow
 * or dead endpoint costs the others nothing (DECISIONS 11). In memory on purpose: both protect this
 * process's sockets and time, and start closed after a restart; what must survive a restart (the
 * pending deliveries) is held by the broker.
 */
export interface HostGuardOptions {
  concurrency: number;
  /** Requests that may wait for a busy host's slot (default: `concurrency`); beyond them, turned away. */
  maxWaiting?: number;
  failureThreshold: number;
  openMs: number;
  now?: () => number;
}

interface HostState {
  inFlight: number;
  failures: number;
  openUntil: number;
  /** Requests waiting for a slot (at most `maxWaiting` of them). */
  waiters: Array<() => void>;
}

export type Admission = { admitted: true; release: (ok: boolean) => void } | { admitted: false; reason: 'circuit_open' | 'host_busy' };

export class HostGuard {
  private readonly hosts = new Map<string, HostState>();
  private readonly now: () => number;

  constructor(private readonly options: HostGuardOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Admits one request to `host`, or says why not (the caller retries later, never waits here). */
  admit(host: string): Admission {
    const state = this.state(host);
    const now = this.now();
    if (state.openUntil > now) return { admitted: false, reason: 'circuit_open' };
    if (state.inFlight >= this.options.concurrency) return { admitted: false, reason: 'host_busy' };
    // After the open period, the circuit is half open: one trial request at a time.
    if (state.failures >= this.options.failureThreshold && state.inFlight > 0) return { admitted: false, reason: 'circuit_open' };
    state.inFlight += 1;
    let released = false;
    return {
      admitted: true,
      release: (ok) => {
        if (released) return;
        released = true;
        state.inFlight -= 1;
        if (ok) {
          state.failures = 0;
          state.openUntil = 0;
        } else {
          state.failures += 1;
          if (state.failures >= this.options.failureThreshold) state.openUntil = this.now() + this.options.openMs;
        }
        state.waiters.shift()?.();
        if (state.inFlight === 0 && state.failures === 0 && state.waiters.length === 0) this.hosts.delete(host);
      },
    };
  }

  /**
   * As admit(), but a busy host's request waits for a slot (up to `maxWaitMs`) while fewer than
   * `maxWaiting` others wait: a burst to one healthy receiver is served in order, while a stalled
   * host holds at most its cap plus `maxWaiting` of the consumer's slots and everything beyond is
   * turned away.
   */
  async acquire(host: string, maxWaitMs: number): Promise<Admission> {
    const first = this.admit(host);
    if (first.admitted || first.reason === 'circuit_open') return first;
    const state = this.state(host);
    if (state.waiters.length >= (this.options.maxWaiting ?? this.options.concurrency)) return first;
    const freed = await new Promise<boolean>((resolve) => {
      const wake = () => { clearTimeout(timer); resolve(true); };
      const timer = setTimeout(() => {
        const index = state.waiters.indexOf(wake);
        if (index >= 0) state.waiters.splice(index, 1);
        resolve(false);
      }, maxWaitMs);
      state.waiters.push(wake);
    });
    return freed ? this.admit(host) : { admitted: false, reason: 'host_busy' };
  }

  openCircuits(): number {
    const now = this.now();
    let open = 0;
    for (const state of this.hosts.values()) if (state.openUntil > now) open += 1;
    return open;
  }

  private state(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      state = { inFlight: 0, failures: 0, openUntil: 0, waiters: [] };
      this.hosts.set(host, state);
    }
    return state;
  }
}

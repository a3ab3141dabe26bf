/**
 * Per receiver host (host:port): a cap on requests in flight and a circuit breaker, so that one slow
 * or dead endpoint costs the others nothing (DECISIONS 11). In memory on purpose: both protect this
 * process's sockets and time, and start closed after a restart; what must survive a restart (the
 * pending deliveries) is held by the broker.
 */
export interface HostGuardOptions {
  concurrency: number;
  failureThreshold: number;
  openMs: number;
  now?: () => number;
}

interface HostState {
  inFlight: number;
  failures: number;
  openUntil: number;
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
        if (state.inFlight === 0 && state.failures === 0) this.hosts.delete(host);
      },
    };
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
      state = { inFlight: 0, failures: 0, openUntil: 0 };
      this.hosts.set(host, state);
    }
    return state;
  }
}

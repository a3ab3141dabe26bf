import type { Logger } from './logger';

export interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

/**
 * Stops what was started, in reverse order, once: the server before the consumers before the
 * pools. A hard deadline keeps the whole stop within the orchestrator's grace period.
 */
export class Lifecycle {
  private readonly stoppables: Stoppable[] = [];
  private stopping: Promise<void> | undefined;
  private draining = false;

  /**
   * drainDelayMs: how long the service keeps serving after it turned not-ready and before it stops
   * listening. Connections a client opened just before the signal still sit in the kernel's accept
   * queue, or are accepted with their request not yet read; closing the listener at once would reset
   * them. The delay lets them be read, after which closing waits for their answers.
   */
  constructor(private readonly logger: Logger, private readonly drainDelayMs = 500) {}

  add(name: string, stop: () => Promise<void> | void): void {
    this.stoppables.push({ name, stop: async () => { await stop(); } });
  }

  get isDraining(): boolean {
    return this.draining;
  }

  stop(): Promise<void> {
    this.stopping ??= this.runStop();
    return this.stopping;
  }

  private async runStop(): Promise<void> {
    this.draining = true;
    if (this.drainDelayMs > 0 && this.stoppables.length > 0) await new Promise((resolve) => setTimeout(resolve, this.drainDelayMs));
    for (const stoppable of [...this.stoppables].reverse()) {
      try {
        await stoppable.stop();
      } catch (err) {
        this.logger.warn('stop failed', { component: stoppable.name, err: (err as Error).message });
      }
    }
  }

  /** SIGTERM/SIGINT: drain and exit 0; past the grace period exit 1 so the orchestrator knows. */
  onSignals(graceMs: number, exit: (code: number) => void = (code) => process.exit(code)): void {
    const handler = (signal: string) => {
      this.logger.info('shutting down', { signal });
      const timer = setTimeout(() => {
        this.logger.error('shutdown exceeded its grace period', { graceMs });
        exit(1);
      }, graceMs);
      timer.unref();
      void this.stop().then(() => exit(0));
    };
    process.once('SIGTERM', handler);
    process.once('SIGINT', handler);
  }
}

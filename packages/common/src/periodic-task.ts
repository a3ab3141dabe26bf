/**
 * Runs `work` every `intervalMs`, never two runs at once (a slow run makes the next tick skip, not
 * pile up); `stop()` waits for a run under way. The timer is unref'd: a background job alone never keeps
 * a process alive. `work` handles its own errors (a job logs and tries again at the next tick).
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly work: () => Promise<void>, private readonly intervalMs: number) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running ??= this.work().finally(() => { this.running = undefined; });
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

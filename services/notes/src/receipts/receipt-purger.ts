import type { Clock, Logger } from '@vanish/common';
import type { ReceiptStore } from './ports';

const HOUR_MS = 3_600_000;

/**
 * Deletes receipts NOTE_RETENTION_HOURS after their note ended (DECISIONS 12), in batches, on the
 * expiry sweeper's interval. Replicas may purge at once: deleting a row twice deletes it once.
 */
export class ReceiptPurger {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  constructor(private readonly options: {
    receipts: Pick<ReceiptStore, 'purgeEnded'>; clock: Clock;
    /** What is purged, for the log line (default `ended receipts`). */
    what?: string; retentionHours: number; intervalMs: number; logger: Logger; batchSize?: number;
    /** Told of a failed purge first: true when it was logged as part of the database's outage. */
    reportedAsOutage?: (err: unknown) => boolean;
  }) {}

  /** One pass; returns how many receipts were purged. */
  async purgeOnce(): Promise<number> {
    const batch = this.options.batchSize ?? 500;
    const cutoff = new Date(this.options.clock.now().getTime() - this.options.retentionHours * HOUR_MS);
    let purged = 0;
    for (let round = 0; round < 100; round += 1) {
      const count = await this.options.receipts.purgeEnded(cutoff, batch);
      purged += count;
      if (count < batch) break;
    }
    return purged;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.purgeOnce()
        .then((purged) => { if (purged > 0) this.options.logger.info(`${this.options.what ?? 'ended receipts'} purged`, { count: purged }); })
        .catch((err: unknown) => {
          if (this.options.reportedAsOutage?.(err)) return;
          this.options.logger.warn(`${this.options.what ?? 'receipt'} purge failed; will retry`, { err: (err as Error).message });
        })
        .finally(() => { this.running = undefined; this.schedule(this.options.intervalMs); });
    }, delayMs);
    this.timer.unref();
  }
}

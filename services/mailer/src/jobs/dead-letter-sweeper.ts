import { type Clock, type Logger, PeriodicTask } from '@vanish/common';

/** The mail commands' dead-letter queue, seen from the sweeper. */
export interface DeadLetterQueue {
  /**
   * Drops every dead-lettered command created before `cutoff` (and any body that is not a readable
   * command envelope: it can never be delivered); keeps the others in their order.
   */
  dropOlderThan(cutoff: Date): Promise<{ dropped: number; kept: number }>;
}

/**
 * A dead-lettered mail command still carries its sealed link and address: it is dropped once older
 * than the retention (MAIL_DEAD_LETTER_RETENTION_MS, default 7 days; DECISIONS 1). Only counts are
 * logged, never a body.
 */
export class DeadLetterSweeper {
  private readonly task: PeriodicTask;

  constructor(private readonly options: { queue: DeadLetterQueue; clock: Clock; retentionMs: number; intervalMs: number; logger: Logger }) {
    this.task = new PeriodicTask(() => this.sweepOnce(), options.intervalMs);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  async sweepOnce(): Promise<void> {
    try {
      const cutoff = new Date(this.options.clock.now().getTime() - this.options.retentionMs);
      const { dropped, kept } = await this.options.queue.dropOlderThan(cutoff);
      if (dropped > 0) this.options.logger.info('dead-lettered mail commands past their retention dropped', { dropped, kept });
    } catch (err) {
      this.options.logger.warn('dead-letter queue not swept', { err: (err as Error).message });
    }
  }
}

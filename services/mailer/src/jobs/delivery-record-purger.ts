import { type Clock, type Logger, PeriodicTask } from '@vanish/common';
import type { MailerStore } from '../domain/mailer-store';

/** Forgets delivery records once no redelivery of their command can still arrive. */
export class DeliveryRecordPurger {
  private readonly task: PeriodicTask;

  constructor(private readonly options: { store: MailerStore; clock: Clock; retentionMs: number; intervalMs: number; logger: Logger }) {
    this.task = new PeriodicTask(() => this.purgeOnce(), options.intervalMs);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  async purgeOnce(): Promise<void> {
    try {
      const removed = await this.options.store.purgeDeliveries(new Date(this.options.clock.now().getTime() - this.options.retentionMs));
      if (removed > 0) this.options.logger.info('old delivery records purged', { removed });
    } catch (err) {
      this.options.logger.warn('delivery records not purged', { err: (err as Error).message });
    }
  }
}

import type { Clock, Logger } from '@vanish/common';
import type { MailerStore } from '../domain/mailer-store';

/** Forgets delivery records once no redelivery of their command can still arrive. */
export class DeliveryRecordPurger {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: { store: MailerStore; clock: Clock; retentionMs: number; intervalMs: number; logger: Logger }) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.purgeOnce().finally(() => { this.running = undefined; });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
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

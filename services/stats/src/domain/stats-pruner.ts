import { type Clock, type Logger, PeriodicTask } from '@vanish/common';
import { MINUTE_MS } from './note-event-effects';
import type { StatsStore } from './stats-store';

export interface StatsPrunerOptions {
  store: StatsStore;
  clock: Clock;
  logger: Logger;
  /** EVENT_ID_RETENTION_HOURS: how long a seen event id protects against a redelivery. */
  eventIdRetentionHours: number;
  intervalMs: number;
}

/** Creation buckets are kept a day beyond the widest window (30 days). */
export const BUCKET_RETENTION_MINUTES = 31 * 24 * 60;
/** Instances silent for a day are forgotten (pods come and go). */
export const HEARTBEAT_RETENTION_MS = 24 * 60 * 60 * 1000;

/**
 * Keeps the stats tables bounded: seen event ids older than the retention window, creation
 * buckets older than every window, heartbeats of instances long gone.
 */
export class StatsPruner {
  private readonly task: PeriodicTask;

  constructor(private readonly options: StatsPrunerOptions) {
    this.task = new PeriodicTask(() => this.pruneOnce().then(() => undefined, (err: Error) => {
      options.logger.warn('pruning failed; will try again', { err: err.message });
    }), options.intervalMs);
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  async pruneOnce(): Promise<{ seen: number; buckets: number; heartbeats: number }> {
    const now = this.options.clock.now().getTime();
    const result = await this.options.store.prune({
      seenBefore: now - this.options.eventIdRetentionHours * 3_600_000,
      bucketsBeforeMinute: Math.floor(now / MINUTE_MS) - BUCKET_RETENTION_MINUTES,
      heartbeatsBefore: now - HEARTBEAT_RETENTION_MS,
    });
    if (result.seen + result.buckets + result.heartbeats > 0) this.options.logger.debug('pruned', result);
    return result;
  }
}

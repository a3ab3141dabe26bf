import type { Clock, Logger, OutgoingMessage } from '@vanish/common';
import { noteEventMessage, notifyObserver, type NoteEventsObserver } from './note-events';
import type { NoteStore } from './ports';
import type { NoteWebhooks } from './note-webhooks';

export interface ExpirySweeperOptions {
  store: NoteStore;
  clock: Clock;
  intervalMs: number;
  logger: Logger;
  /** Notes examined per query; a run repeats until fewer come back (or maxPerRun is reached). */
  batchSize?: number;
  maxPerRun?: number;
  events?: NoteEventsObserver;
  /** DECISIONS 11: gives note.expired its sealed webhook part (no uuid, no access details). */
  webhooks?: NoteWebhooks;
  /**
   * Told of a failed sweep first: true when it was reported as part of a dependency's outage (the
   * database is down), which logs it once for all; then the sweep writes no line of its own.
   */
  reportedAsOutage?: (err: unknown) => boolean;
  /** Runs after each scheduled sweep, in the same schedule (DECISIONS 14: the file sweep). */
  afterSweep?: () => Promise<unknown>;
}

/**
 * Purges notes past expires_at (DECISIONS 3): time and both notes end with `note.expired` reason
 * `time`, unread view notes past their retention with reason `retention`. Each note is deleted and
 * its event written in one transaction that first locks the row, so with several replicas
 * sweeping at once each note still ends exactly once, with one event.
 */
export class ExpirySweeper {
  private readonly store: NoteStore;
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly logger: Logger;
  private readonly batchSize: number;
  private readonly maxPerRun: number;
  private readonly events: NoteEventsObserver | undefined;
  private readonly webhooks: NoteWebhooks | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  constructor(private readonly options: ExpirySweeperOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.intervalMs = options.intervalMs;
    this.logger = options.logger;
    this.batchSize = options.batchSize ?? 100;
    this.maxPerRun = options.maxPerRun ?? 10_000;
    this.events = options.events;
    this.webhooks = options.webhooks;
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

  /** One sweep; returns how many notes this sweeper ended. */
  async sweepOnce(): Promise<number> {
    let ended = 0;
    let examined = 0;
    while (examined < this.maxPerRun) {
      const now = this.clock.now();
      const expired = await this.store.findExpired(now, this.batchSize);
      for (const candidate of expired) {
        if (await this.endNote(candidate.lookup, now)) ended += 1;
      }
      examined += expired.length;
      if (expired.length < this.batchSize) break;
    }
    return ended;
  }

  private async endNote(lookup: string, now: Date): Promise<boolean> {
    const messages = await this.store.transaction(async (tx) => {
      const state = await tx.lock(lookup);
      if (!state || state.expiresAt.getTime() > now.getTime()) return null;
      if (!(await tx.delete(lookup))) return null;
      const reason = state.expiryType === 'view' ? 'retention' : 'time';
      let out: OutgoingMessage[] = [noteEventMessage('note.expired', { note_id: state.noteRef, reason, was_read: state.currentViews > 0 }, now)];
      if (this.webhooks) out = this.webhooks.attach(out, { uuid: null, access: null, target: state.webhookBox ?? null });
      await tx.enqueue(out);
      // The note stopped being readable at its expiry, not when the sweep got to it.
      await tx.recordReceipt([{ noteRef: state.noteRef, at: state.expiresAt, kind: 'end', reason }]);
      return out;
    });
    if (!messages) return false;
    notifyObserver(this.events, messages);
    return true;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const run = this.sweepOnce()
        .then(async (ended) => {
          if (ended > 0) this.logger.info('expired notes purged', { count: ended });
          await this.options.afterSweep?.();
        })
        .catch((err: unknown) => {
          if (this.options.reportedAsOutage?.(err)) return;
          this.logger.warn('expiry sweep failed; will retry', { err: (err as Error).message });
        })
        .finally(() => {
          this.running = undefined;
          this.schedule(this.intervalMs);
        });
      this.running = run;
    }, delayMs);
    this.timer.unref();
  }
}

import { PartialPublishError, type Logger, type MessagePublisher, type OutboxRow, type OutboxStore } from '@vanish/common';
import { Counter, Gauge, type Registry } from 'prom-client';

export interface OutboxRelayOptions {
  store: OutboxStore;
  publisher: MessagePublisher;
  logger: Logger;
  registry?: Registry;
  /** Poll period while rows keep coming. Default 50 ms (event lag stays well under a second under load). */
  intervalMs?: number;
  /** Poll period once idle: empty rounds double the period from intervalMs up to this. Default 250 ms. */
  idleIntervalMs?: number;
  /**
   * After notify(), wait this long before the round, so that rows committed meanwhile go in the same
   * claim, publish and delete (under a steady stream of creations, one round per linger instead of
   * one per commit). Default 25 ms; 0 publishes at once.
   */
  lingerMs?: number;
  /** Rows claimed and published per round. Default 100. */
  batchSize?: number;
  /**
   * How long a claim keeps other relays off the rows. The relay renews it every third of it while it
   * holds the rows (a publish may wait for the broker's confirm longer than that), so a lease need
   * only outlast a renewal's round trip: a relay that dies holds its rows back this long. Default 5000.
   */
  leaseMs?: number;
  /** How often the backlog gauges are refreshed. Default 5000. */
  backlogEveryMs?: number;
  /** Longest pause after failures (doubling from intervalMs). Default 5000. */
  maxBackoffMs?: number;
}

interface Held {
  rows: OutboxRow[];
  /** Until when the lease surely runs (as of the last claim or renewal that went through). */
  leasedUntil: number;
  /** The broker confirmed them; only the delete is left. */
  published: boolean;
}

function metric<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

/**
 * Relays committed outbox rows to the broker: claim (a short lease, renewed while the relay holds the
 * rows, so several notes replicas never publish the same row at the same time and a dead relay's rows
 * come back within seconds), publish with confirms, then mark published. The row is
 * deleted only after the broker confirmed it, so a crash between the two yields a duplicate
 * (consumers are idempotent by id), never a loss. While the broker is down the rows simply wait;
 * the relay keeps the rows it holds and publishes them again as soon as it can.
 */
export class OutboxRelay {
  private readonly intervalMs: number;
  private readonly idleIntervalMs: number;
  private idleDelay: number;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly backlogEveryMs: number;
  private readonly maxBackoffMs: number;
  private readonly logger: Logger;
  private readonly lingerMs: number;
  private timer: NodeJS.Timeout | undefined;
  private timerDueAt = 0;
  private running: Promise<void> | undefined;
  private started = false;
  private held: Held | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private lastBacklogAt = 0;
  private readonly published?: Counter<string>;
  private readonly failed?: Counter<string>;
  private readonly backlogCount?: Gauge<string>;
  private readonly backlogAge?: Gauge<string>;

  constructor(private readonly options: OutboxRelayOptions) {
    this.intervalMs = options.intervalMs ?? 50;
    this.idleIntervalMs = Math.max(this.intervalMs, options.idleIntervalMs ?? 250);
    this.idleDelay = this.intervalMs;
    this.lingerMs = options.lingerMs ?? 25;
    this.batchSize = options.batchSize ?? 100;
    this.leaseMs = options.leaseMs ?? 5_000;
    this.backlogEveryMs = options.backlogEveryMs ?? 5_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 5_000;
    this.logger = options.logger.child('bus/outbox-relay');
    const registry = options.registry;
    if (registry) {
      this.published = metric(registry, 'outbox_published_total', () => new Counter({ name: 'outbox_published_total', help: 'Outbox rows published and confirmed', registers: [registry] }));
      this.failed = metric(registry, 'outbox_publish_failures_total', () => new Counter({ name: 'outbox_publish_failures_total', help: 'Relay rounds that failed (broker or database unavailable)', registers: [registry] }));
      this.backlogCount = metric(registry, 'outbox_backlog_messages', () => new Gauge({ name: 'outbox_backlog_messages', help: 'Outbox rows waiting to be published', registers: [registry] }));
      this.backlogAge = metric(registry, 'outbox_oldest_age_seconds', () => new Gauge({ name: 'outbox_oldest_age_seconds', help: 'Age of the oldest unpublished outbox row', registers: [registry] }));
    }
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.schedule(0);
  }

  /** Publish soon, within lingerMs (call after committing a row, to cut the lag below one poll period). */
  notify(): void {
    if (!this.started || this.running) return;
    if (this.timer && this.timerDueAt <= Date.now() + this.lingerMs) return;
    if (this.timer) clearTimeout(this.timer);
    this.schedule(this.lingerMs);
  }

  async stop(): Promise<void> {
    this.started = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    await this.letGo();
  }

  /** One round, for tests and tools: publishes until the outbox is empty or a failure. Returns rows published. */
  async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const count = await this.round();
      total += count;
      if (count < this.batchSize) return total;
    }
  }

  private schedule(delayMs: number): void {
    this.timerDueAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.tick().finally(() => { this.running = undefined; });
    }, delayMs);
  }

  private async tick(): Promise<void> {
    let next = this.intervalMs;
    try {
      const count = await this.round();
      if (this.failures > 0) this.logger.info('outbox relay recovered', { afterFailures: this.failures });
      this.failures = 0;
      if (count >= this.batchSize) {
        next = 0;
      } else if (count > 0) {
        this.idleDelay = this.intervalMs;
      } else {
        // Nothing to do: poll less often, up to idleIntervalMs (notify() wakes it at once).
        next = this.idleDelay;
        this.idleDelay = Math.min(this.idleIntervalMs, this.idleDelay * 2);
      }
    } catch (err) {
      this.failures += 1;
      this.failed?.inc();
      // Once per streak at warn, then quietly: a broker outage is expected and self-healing.
      const log = this.failures === 1 ? this.logger.warn : this.logger.debug;
      log.call(this.logger, 'outbox relay round failed; rows stay in the outbox', { err: (err as Error).message, failures: this.failures });
      next = Math.min(this.maxBackoffMs, this.intervalMs * 2 ** Math.min(this.failures, 10));
    }
    await this.refreshBacklog();
    if (this.started) this.schedule(next);
  }

  private async round(): Promise<number> {
    // Rows held from a failed round are tried again while their lease still protects them.
    if (this.held && Date.now() >= this.held.leasedUntil - this.leaseMs * 0.2) this.hold(undefined);
    if (!this.held) {
      const claimedAt = Date.now();
      const rows = await this.options.store.claim(this.batchSize, this.leaseMs);
      if (rows.length === 0) return 0;
      this.hold({ rows, leasedUntil: claimedAt + this.leaseMs, published: false });
    }
    const held = this.held!;
    if (!held.published) await this.publish(held);
    // Confirmed by the broker: from here a crash means a duplicate later, never a loss. A failed
    // delete keeps the rows held (and leased), so the next round deletes them without publishing again.
    held.published = true;
    await this.options.store.markPublished(held.rows.map((row) => row.seq));
    this.hold(undefined);
    this.published?.inc(held.rows.length);
    return held.rows.length;
  }

  private async publish(held: Held): Promise<void> {
    const { rows } = held;
    try {
      await this.options.publisher.publish(rows.map((row) => ({ id: row.id, routingKey: row.routingKey, body: row.body })));
    } catch (err) {
      if (err instanceof PartialPublishError && err.confirmedIds.length > 0) {
        // Mark what the broker took, so that only the rest is sent again (no duplicates for consumers).
        const confirmed = new Set(err.confirmedIds);
        await this.options.store.markPublished(rows.filter((row) => confirmed.has(row.id)).map((row) => row.seq));
        this.published?.inc(confirmed.size);
        held.rows = rows.filter((row) => !confirmed.has(row.id));
      }
      throw err;
    }
  }

  /** Holds rows (renewing their lease while held), or, with undefined, holds none. */
  private hold(held: Held | undefined): void {
    this.held = held;
    if (this.renewTimer) clearTimeout(this.renewTimer);
    this.renewTimer = undefined;
    if (held) this.scheduleRenewal(held);
  }

  private scheduleRenewal(held: Held): void {
    this.renewTimer = setTimeout(() => {
      void this.renew(held).finally(() => {
        if (this.held === held) this.scheduleRenewal(held);
      });
    }, this.leaseMs / 3);
    this.renewTimer.unref();
  }

  private async renew(held: Held): Promise<void> {
    const renewedAt = Date.now();
    try {
      const renewed = await this.options.store.renewLease(held.rows.map((row) => row.seq), this.leaseMs);
      // Fewer rows than held: some lease ran out before the renewal (the database was slow or away);
      // the held lease then ends as before and the next round claims afresh.
      if (renewed === held.rows.length) held.leasedUntil = renewedAt + this.leaseMs;
    } catch (err) {
      this.logger.debug('could not renew the outbox lease', { err: (err as Error).message });
    }
  }

  /** On stop: rows published are deleted, rows not published are given back to the other relays at once. */
  private async letGo(): Promise<void> {
    const held = this.held;
    this.hold(undefined);
    if (!held || held.rows.length === 0) return;
    const seqs = held.rows.map((row) => row.seq);
    try {
      if (held.published) await this.options.store.markPublished(seqs);
      else await this.options.store.releaseLease(seqs);
    } catch (err) {
      this.logger.warn('could not give back the claimed outbox rows; they return when their lease ends', { err: (err as Error).message });
    }
  }

  private async refreshBacklog(): Promise<void> {
    if (!this.backlogCount || Date.now() - this.lastBacklogAt < this.backlogEveryMs) return;
    this.lastBacklogAt = Date.now();
    try {
      const { count, oldestAgeSeconds } = await this.options.store.backlog();
      this.backlogCount.set(count);
      this.backlogAge?.set(oldestAgeSeconds);
    } catch {
      // The database is down; the next round says so.
    }
  }
}

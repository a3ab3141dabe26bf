import { randomUUID } from 'node:crypto';
import type { Heartbeat, Logger, MessagePublisher } from '@vanish/common';
import type { ExpiringMessage } from './rabbitmq-publishing';

export interface HeartbeatPublisherOptions {
  publisher: MessagePublisher;
  service: Heartbeat['data']['service'];
  /** Distinguishes replicas (e.g. the host name); default a random id per process. */
  instance?: string;
  /** HEARTBEAT_INTERVAL_MS (default 10000). */
  intervalMs?: number;
  /** Probes the components this service vouches for, e.g. `{ database: 'healthy', encryption: 'available' }`. */
  probe: () => Promise<Heartbeat['data']['components']>;
  logger: Logger;
  now?: () => Date;
}

/**
 * Publishes `service.heartbeat` on `health.<service>` every interval, straight through the
 * publisher (not the outbox: a heartbeat that cannot be sent now is worthless later). Stats turns
 * them into health_status; silence for three periods reads as unhealthy.
 */
export class HeartbeatPublisher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly instance: string;
  private readonly intervalMs: number;
  private failing = false;

  constructor(private readonly options: HeartbeatPublisherOptions) {
    this.instance = options.instance ?? randomUUID().slice(0, 8);
    this.intervalMs = options.intervalMs ?? 10_000;
  }

  start(): void {
    if (this.timer) return;
    const run = () => {
      if (!this.running) this.running = this.beat().finally(() => { this.running = undefined; });
    };
    run();
    this.timer = setInterval(run, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Probes and publishes once (also used by start()). */
  async beat(): Promise<void> {
    const logger = this.options.logger;
    try {
      const components = await this.options.probe();
      const heartbeat: Heartbeat = {
        id: randomUUID(),
        event: 'service.heartbeat',
        version: 1,
        timestamp: (this.options.now?.() ?? new Date()).toISOString(),
        data: { service: this.options.service, instance: this.instance, components },
      };
      // Worthless once three periods old (stats reads silence then anyway): the broker may drop it.
      const message: ExpiringMessage = {
        id: heartbeat.id, routingKey: `health.${this.options.service}`, body: JSON.stringify(heartbeat), expiresInMs: 3 * this.intervalMs,
      };
      await this.options.publisher.publish([message]);
      if (this.failing) logger.info('heartbeats flowing again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) logger.warn('heartbeat not published', { err: (err as Error).message });
      this.failing = true;
    }
  }
}

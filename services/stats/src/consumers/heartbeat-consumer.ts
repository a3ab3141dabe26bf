import { PermanentMessageFailure, type Clock, type IncomingMessage, type Logger, type MessageConsumer, type Subscription } from '@vanish/common';
import type { HeartbeatRecord, StatsStore } from '../domain/stats-store';
import type { StatsMetrics } from '../stats-metrics';

export const HEARTBEATS_QUEUE = 'stats.heartbeats';

const SERVICES = new Set(['notes', 'gateway', 'stats', 'mailer']);
const COMPONENTS = new Set(['database', 'encryption', 'email']);

export interface HeartbeatConsumerOptions {
  consumer: MessageConsumer;
  store: StatsStore;
  clock: Clock;
  logger: Logger;
  metrics: StatsMetrics;
  queuePrefix?: string;
}

/** Reads a heartbeat (common Heartbeat); throws on anything else. Only known components are kept. */
export function parseHeartbeat(body: string, receivedAt: number): HeartbeatRecord {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new Error('not JSON');
  }
  const v = value as { event?: unknown; timestamp?: unknown; data?: { service?: unknown; instance?: unknown; components?: unknown } };
  if (typeof v !== 'object' || v === null || v.event !== 'service.heartbeat') throw new Error('not a heartbeat');
  const sentAt = typeof v.timestamp === 'string' ? Date.parse(v.timestamp) : NaN;
  if (Number.isNaN(sentAt)) throw new Error('bad timestamp');
  const data = v.data;
  if (!data || typeof data.service !== 'string' || !SERVICES.has(data.service)) throw new Error('unknown service');
  if (typeof data.instance !== 'string' || !/^[A-Za-z0-9._:-]{1,64}$/.test(data.instance)) throw new Error('bad instance');
  if (typeof data.components !== 'object' || data.components === null) throw new Error('no components');
  const components: Record<string, string> = {};
  for (const [name, state] of Object.entries(data.components as Record<string, unknown>)) {
    if (COMPONENTS.has(name) && typeof state === 'string' && /^[a-z_]{1,32}$/.test(state)) components[name] = state;
  }
  // Freshness is when it was sent, never later than when it arrived: a backlog of old heartbeats
  // (stats was down) does not make a silent component look alive.
  return { service: data.service, instance: data.instance, components, observedAt: Math.min(sentAt, receivedAt) };
}

/**
 * Entry point for heartbeats (`health.*` on `stats.heartbeats`). A heartbeat is only worth
 * something now: when it cannot be stored it is dropped (the next one comes in one period),
 * never retried for long or dead-lettered, and one that waited past its expiry (stats was away) is
 * dropped by the broker (a disposable queue); a malformed one goes to the dead-letter queue.
 */
export class HeartbeatConsumer {
  private subscription: Subscription | undefined;
  private readonly logger: Logger;

  constructor(private readonly options: HeartbeatConsumerOptions) {
    this.logger = options.logger.child('stats/heartbeat-consumer');
  }

  get queueName(): string {
    return `${this.options.queuePrefix ?? ''}${HEARTBEATS_QUEUE}`;
  }

  async start(): Promise<void> {
    this.subscription = await this.options.consumer.consume({ queue: this.queueName, bindings: ['health.*'], prefetch: 10, maxAttempts: 1, disposable: true }, (m) => this.handle(m));
  }

  async stop(): Promise<void> {
    await this.subscription?.cancel();
    this.subscription = undefined;
  }

  async handle(message: IncomingMessage): Promise<void> {
    const { metrics, store, clock } = this.options;
    let heartbeat: HeartbeatRecord;
    try {
      heartbeat = parseHeartbeat(message.body, clock.now().getTime());
    } catch (err) {
      metrics.heartbeat('unknown', 'malformed');
      throw new PermanentMessageFailure(`malformed heartbeat: ${(err as Error).message}`);
    }
    try {
      await store.recordHeartbeat(heartbeat);
      metrics.heartbeat(heartbeat.service, 'recorded');
    } catch (err) {
      metrics.heartbeat(heartbeat.service, 'dropped');
      this.logger.warn('heartbeat dropped: cannot store it', { service: heartbeat.service, err: (err as Error).message });
    }
  }
}

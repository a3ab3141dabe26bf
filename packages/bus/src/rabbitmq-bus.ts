import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { PartialPublishError } from '@vanish/common';
import type { ConsumeOptions, DependencyState, Logger, MessageConsumer, MessageHandler, MessagePublisher, OutgoingMessage, Subscription } from '@vanish/common';
import type { Registry } from 'prom-client';
import { createBusMetrics, type BusMetrics } from './bus-metrics';
import type { AmqpTlsSettings } from './amqp-tls';
import type { DeliveryOutcome } from './delivery-policy';
import { newConnectionName, RabbitMqConnection } from './rabbitmq-connection';
import { BusUnavailableError, publishConfirmed, publishItems, type PublishItem } from './rabbitmq-publishing';
import { RabbitSubscription, type ForwardedMessage, type SubscriptionHost } from './rabbitmq-subscription';
import {
  HEADER_ATTEMPT, HEADER_DEAD_REASON, HEADER_ERROR, HEADER_QUEUE, HEADER_ROUTING_KEY,
  CLASSIC_QUEUES, declareRetryQueue, dlqName, dlxName, retryQueueName, type QueueSettings,
} from './rabbitmq-topology';

export interface RabbitMqBusOptions {
  /**
   * amqp://user:pass@host:port/vhost, or amqps:// (TLS, see `tls`); several nodes of one cluster as a
   * comma-separated list (or `urls`): the bus connects to the first that answers and, on loss, to the next.
   */
  url: string;
  urls?: readonly string[];
  /** The type of the queues it declares (default classic; services read AMQP_QUEUE_TYPE, quorum in production). */
  queues?: QueueSettings;
  /** For amqps://: the CA to verify the broker with (amqp-tls.ts). */
  tls?: AmqpTlsSettings;
  /** The topic exchange (default `vanish`); tests use their own. */
  exchange?: string;
  logger: Logger;
  registry?: Registry;
  /** Shown by `rabbitmqctl list_connections name client_properties` (connection_name). */
  connectionName?: string;
  /** Return at once and keep trying in the background instead of failing when the broker is down. */
  connectLazily?: boolean;
  /** A publish not confirmed within this long rejects (a stalled broker must not hang the relay). Default 10000. */
  confirmTimeoutMs?: number;
  /** Reconnect backoff: doubles from initial to max, with jitter. Default 200 → 10000 ms. */
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  /** AMQP heartbeat in seconds (detects a dead peer behind a silent network). Default 5. */
  heartbeatSeconds?: number;
  /**
   * Routing keys whose messages are packed: the messages of one publish() that share such a key go
   * as one AMQP message (message-packs.ts). Only for keys whose consumers run this bus. Default none.
   */
  packRoutingKeys?: (routingKey: string) => boolean;
  /**
   * The service's state of its broker (common's Outages: `outages.of('rabbitmq')`): the connection's
   * loss is one event in the log, and its failures count in `<svc>_dependency_failures_total`.
   * Default: a state of the bus's own, logging through its logger.
   */
  outage?: DependencyState;
}

/**
 * RabbitMQ through amqplib: a durable topic exchange, durable queues, persistent messages sent on
 * a confirm channel (publish resolves after the broker's confirms), manual acks after the handler
 * resolves, prefetch, a dead-letter exchange and `<queue>.dlq`, broker-held retry delays (TTL
 * queues), error listeners everywhere, and reconnection with backoff that re-subscribes by itself.
 * Connection management lives in rabbitmq-connection.ts, publishing in rabbitmq-publishing.ts,
 * consuming in rabbitmq-subscription.ts, packs in message-packs.ts; this class joins them.
 */
export class RabbitMqBus implements MessagePublisher, MessageConsumer, SubscriptionHost {
  readonly exchange: string;
  readonly connectionName: string;
  readonly queueSettings: QueueSettings;
  private readonly logger: Logger;
  private readonly metrics: BusMetrics;
  private readonly confirmTimeoutMs: number;
  private readonly connection: RabbitMqConnection;
  private readonly subscriptions = new Set<RabbitSubscription>();

  private constructor(private readonly options: RabbitMqBusOptions) {
    this.exchange = options.exchange ?? 'vanish';
    this.connectionName = options.connectionName ?? newConnectionName();
    this.queueSettings = options.queues ?? CLASSIC_QUEUES;
    this.logger = options.logger.child('bus/rabbitmq');
    this.metrics = createBusMetrics(options.registry, 'rabbitmq');
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 10_000;
    this.connection = new RabbitMqConnection({
      url: options.url,
      urls: options.urls,
      tls: options.tls,
      connectionName: this.connectionName,
      heartbeatSeconds: options.heartbeatSeconds,
      exchange: this.exchange,
      logger: this.logger,
      metrics: this.metrics,
      reconnectInitialDelayMs: options.reconnectInitialDelayMs,
      reconnectMaxDelayMs: options.reconnectMaxDelayMs,
      onOpen: async (model) => {
        for (const subscription of this.subscriptions) await subscription.attach(model);
      },
      onLost: () => {
        for (const subscription of this.subscriptions) subscription.detach();
      },
      subscriptionCount: () => this.subscriptions.size,
      outage: options.outage,
    });
  }

  static async connect(options: RabbitMqBusOptions): Promise<RabbitMqBus> {
    const bus = new RabbitMqBus(options);
    await bus.connection.start(options.connectLazily ?? false);
    return bus;
  }

  get isConnected(): boolean {
    return this.connection.connected !== undefined;
  }

  /**
   * Resolves true once connected (and every subscription attached), false after timeoutMs.
   * For a lazily connected bus whose owner prefers to start with its queues declared.
   */
  waitUntilConnected(timeoutMs: number): Promise<boolean> {
    return this.connection.waitUntilConnected(timeoutMs);
  }

  /** True while the connection is lost (the broker's outage, told once in the log). */
  get isBrokerDown(): boolean {
    return this.connection.isDown || this.connection.connected === undefined;
  }

  /** For /readyz. */
  async ping(): Promise<boolean> {
    return this.isConnected;
  }

  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const connected = this.connection.connected;
    if (!connected) throw new BusUnavailableError();
    const sent = publishItems(this.exchange, messages, this.options.packRoutingKeys);
    await this.confirmed(connected.publishChannel, sent.map(({ item }) => item));
    const returnedIds = new Set(sent.filter(({ item }) => connected.returned.delete(String(item.options.messageId))).flatMap(({ memberIds }) => memberIds));
    const unroutable = messages.filter((m) => returnedIds.has(m.id));
    if (unroutable.length > 0) {
      const message = `no queue is bound for ${[...new Set(unroutable.map((m) => m.routingKey))].join(', ')} yet (its consumer has not started)`;
      throw new PartialPublishError(message, messages.filter((m) => !returnedIds.has(m.id)).map((m) => m.id));
    }
    const byKey = new Map<string, number>();
    for (const m of messages) byKey.set(m.routingKey, (byKey.get(m.routingKey) ?? 0) + 1);
    for (const [key, count] of byKey) this.metrics.published(key, count);
  }

  async consume(options: ConsumeOptions, handler: MessageHandler): Promise<Subscription> {
    if (this.connection.isClosed) throw new Error('RabbitMqBus is closed');
    const subscription = new RabbitSubscription(this, options, handler, this.logger);
    this.subscriptions.add(subscription);
    const model = this.model;
    if (model) {
      try {
        await subscription.attach(model);
      } catch (err) {
        // Cancelled, not only forgotten: a channel that closed on the refusal has already scheduled a
        // re-subscription, which would otherwise consume for a caller that was told it failed.
        await this.cancel(subscription).catch(() => undefined);
        throw err;
      }
    }
    return { cancel: () => this.cancel(subscription) };
  }

  close(): Promise<void> {
    return this.connection.close(async () => {
      await Promise.allSettled([...this.subscriptions].map((s) => this.cancel(s)));
    });
  }

  /** @internal Used by subscriptions to move a message to a retry queue or a dead-letter queue. */
  async forward(
    queue: string,
    outcome: Exclude<DeliveryOutcome, { kind: 'ack' }>,
    message: ForwardedMessage,
    routingKey: string,
    attempt: number,
  ): Promise<void> {
    const connected = this.connection.connected;
    if (!connected) throw new BusUnavailableError();
    const headers: Record<string, unknown> = { ...message.headers, [HEADER_ROUTING_KEY]: routingKey, [HEADER_QUEUE]: queue };
    let target: { exchange: string; routingKey: string };
    if (outcome.kind === 'retry') {
      const retryQueue = retryQueueName(queue, outcome.delayMs);
      if (!connected.retryQueues.has(retryQueue)) {
        await declareRetryQueue(connected.publishChannel, queue, outcome.delayMs, this.queueSettings);
        connected.retryQueues.add(retryQueue);
      }
      headers[HEADER_ATTEMPT] = attempt + 1;
      target = { exchange: '', routingKey: retryQueue };
    } else {
      headers[HEADER_ATTEMPT] = attempt;
      headers[HEADER_DEAD_REASON] = outcome.reason;
      headers[HEADER_ERROR] = outcome.error.slice(0, 500);
      target = { exchange: dlxName(this.exchange), routingKey: dlqName(queue) };
    }
    await this.confirmed(connected.publishChannel, [{
      ...target,
      content: message.content,
      options: { messageId: message.messageId, headers, ...(message.contentType ? { contentType: message.contentType } : {}) },
    }]);
  }

  /** publishConfirmed, and after a refusal a new channel for the next publish (see renewPublishChannel). */
  private async confirmed(channel: ConfirmChannel, items: readonly PublishItem[]): Promise<void> {
    try {
      await publishConfirmed(channel, items, this.confirmTimeoutMs);
    } catch (err) {
      await this.connection.renewPublishChannel(channel).catch((renewErr: Error) => {
        this.logger.warn('could not open a new publish channel', { err: renewErr.message });
      });
      throw err;
    }
  }

  /** @internal */
  handled(queue: string, outcome: 'ack' | 'retry' | 'dead_letter'): void {
    this.metrics.handled(queue, outcome);
  }

  /** @internal The connection subscriptions attach to, if any. */
  get model(): ChannelModel | undefined {
    return this.connection.connected?.model;
  }

  private async cancel(subscription: RabbitSubscription): Promise<void> {
    this.subscriptions.delete(subscription);
    await subscription.cancel();
  }
}

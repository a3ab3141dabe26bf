import { randomBytes, randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage, type Options } from 'amqplib';
import { PartialPublishError } from '@vanish/common';
import type {
  ConsumeOptions, IncomingMessage, Logger, MessageConsumer, MessageHandler, MessagePublisher, OutgoingMessage, Subscription,
} from '@vanish/common';
import type { Registry } from 'prom-client';
import { createBusMetrics, type BusMetrics } from './bus-metrics';
import { amqpSocketOptions, type AmqpTlsSettings } from './amqp-tls';
import { coalesceFrameWrites } from './frame-write-coalescing';
import { MAX_PACK_MEMBERS, PACK_CONTENT_TYPE, decodePack, encodePack, type PackMember } from './message-packs';
import { DEFAULT_PREFETCH, decideOutcome, type DeliveryOutcome } from './delivery-policy';
import {
  HEADER_ATTEMPT, HEADER_DEAD_REASON, HEADER_ERROR, HEADER_QUEUE, HEADER_ROUTING_KEY,
  dlqName, dlxName, mainQueueArguments, retryQueueArguments, retryQueueName,
} from './rabbitmq-topology';

export interface RabbitMqBusOptions {
  /** amqp://user:pass@host:port/vhost, or amqps:// (TLS, see `tls`) */
  url: string;
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
}

interface PublishItem {
  exchange: string;
  routingKey: string;
  content: Buffer;
  options: Options.Publish;
}

/** What forward() moves to a retry queue or a dead-letter queue: a delivery, or one member of a pack. */
interface ForwardedMessage {
  content: Buffer;
  messageId: string | undefined;
  headers: Record<string, unknown>;
  contentType: string | undefined;
}

/**
 * An OutgoingMessage may carry `expiresInMs`: the broker drops it when it has waited that long in a
 * queue (AMQP per-message expiration). Heartbeats use it: one older than three periods is worthless,
 * and a stats outage must not pile them up. Transports without expiry ignore it.
 */
export type ExpiringMessage = OutgoingMessage & { expiresInMs?: number };

/** Thrown by publish() while the bus has no connection: callers keep their rows and retry. */
export class BusUnavailableError extends Error {
  constructor(message = 'not connected to RabbitMQ', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'BusUnavailableError';
  }
}

interface Connected {
  model: ChannelModel;
  publishChannel: ConfirmChannel;
  retryQueues: Set<string>;
  /** Ids of mandatory messages the broker returned as unroutable. */
  returned: Set<string>;
}

/**
 * RabbitMQ through amqplib: a durable topic exchange, durable queues, persistent messages sent on
 * a confirm channel (publish resolves after the broker's confirms), manual acks after the handler
 * resolves, prefetch, a dead-letter exchange and `<queue>.dlq`, broker-held retry delays (TTL
 * queues), error listeners everywhere, and reconnection with backoff that re-subscribes by itself.
 */
export class RabbitMqBus implements MessagePublisher, MessageConsumer {
  readonly exchange: string;
  readonly connectionName: string;
  private readonly logger: Logger;
  private readonly metrics: BusMetrics;
  private readonly confirmTimeoutMs: number;
  private current: Connected | undefined;
  private readonly subscriptions = new Set<RabbitSubscription>();
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempt = 0;
  private opening: Promise<void> | undefined;
  private closed = false;
  private everConnected = false;

  private constructor(private readonly options: RabbitMqBusOptions) {
    this.exchange = options.exchange ?? 'vanish';
    this.connectionName = options.connectionName ?? `vanish-${process.pid}-${randomBytes(4).toString('hex')}`;
    this.logger = options.logger.child('bus/rabbitmq');
    this.metrics = createBusMetrics(options.registry, 'rabbitmq');
    this.confirmTimeoutMs = options.confirmTimeoutMs ?? 10_000;
  }

  static async connect(options: RabbitMqBusOptions): Promise<RabbitMqBus> {
    const bus = new RabbitMqBus(options);
    if (options.connectLazily) {
      bus.scheduleReconnect(0);
    } else {
      await bus.open();
    }
    return bus;
  }

  get isConnected(): boolean {
    return this.current !== undefined;
  }

  /**
   * Resolves true once connected (and every subscription attached), false after timeoutMs.
   * For a lazily connected bus whose owner prefers to start with its queues declared.
   */
  async waitUntilConnected(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.current && !this.closed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await this.opening?.catch(() => undefined);
    return this.current !== undefined;
  }

  /** For /readyz. */
  async ping(): Promise<boolean> {
    return this.isConnected;
  }

  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const connected = this.current;
    if (!connected) throw new BusUnavailableError();
    const sent = this.publishItems(messages);
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

  /** One AMQP message per message, or per pack of up to MAX_PACK_MEMBERS messages of a packed routing key. */
  private publishItems(messages: readonly OutgoingMessage[]): Array<{ item: PublishItem; memberIds: string[] }> {
    const sent: Array<{ item: PublishItem; memberIds: string[] }> = [];
    const packs = new Map<string, OutgoingMessage[]>();
    for (const m of messages) {
      if (!isExpiring(m) && this.options.packRoutingKeys?.(m.routingKey)) packs.set(m.routingKey, [...(packs.get(m.routingKey) ?? []), m]);
      else sent.push(this.alone(m));
    }
    for (const [routingKey, pack] of packs) {
      for (let start = 0; start < pack.length; start += MAX_PACK_MEMBERS) {
        const members = pack.slice(start, start + MAX_PACK_MEMBERS);
        if (members.length === 1) {
          sent.push(this.alone(members[0]));
          continue;
        }
        sent.push({
          memberIds: members.map((m) => m.id),
          item: {
            exchange: this.exchange, routingKey, content: encodePack(members),
            options: { messageId: `pack-${randomUUID()}`, mandatory: true, contentType: PACK_CONTENT_TYPE },
          },
        });
      }
    }
    return sent;
  }

  /** A message sent as itself. */
  private alone(m: OutgoingMessage): { item: PublishItem; memberIds: string[] } {
    const expiresInMs = isExpiring(m) ? (m as ExpiringMessage).expiresInMs! : undefined;
    return {
      memberIds: [m.id],
      item: {
        exchange: this.exchange,
        routingKey: m.routingKey,
        content: Buffer.from(m.body, 'utf8'),
        // Mandatory: on a fresh broker no consumer has declared its queue yet, and a message no queue
        // takes would be confirmed and dropped. Returned, it fails the publish and stays in the outbox.
        // Expiring messages (heartbeats) are worthless later and may be dropped.
        options: { messageId: m.id, mandatory: expiresInMs === undefined, ...(expiresInMs !== undefined ? { expiration: String(Math.round(expiresInMs)) } : {}) },
      },
    };
  }

  async consume(options: ConsumeOptions, handler: MessageHandler): Promise<Subscription> {
    if (this.closed) throw new Error('RabbitMqBus is closed');
    const subscription = new RabbitSubscription(this, options, handler, this.logger);
    this.subscriptions.add(subscription);
    if (this.current) {
      try {
        await subscription.attach(this.current.model);
      } catch (err) {
        this.subscriptions.delete(subscription);
        throw err;
      }
    }
    return { cancel: () => this.cancel(subscription) };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await Promise.allSettled([...this.subscriptions].map((s) => this.cancel(s)));
    await this.opening?.catch(() => undefined);
    const connected = this.current;
    this.current = undefined;
    if (connected) {
      await connected.publishChannel.close().catch(() => undefined);
      await connected.model.close().catch(() => undefined);
    }
    this.metrics.connected(false);
  }

  /** @internal Used by subscriptions to move a message to a retry queue or a dead-letter queue. */
  async forward(
    queue: string,
    outcome: Exclude<DeliveryOutcome, { kind: 'ack' }>,
    message: ForwardedMessage,
    routingKey: string,
    attempt: number,
  ): Promise<void> {
    const connected = this.current;
    if (!connected) throw new BusUnavailableError();
    const headers: Record<string, unknown> = { ...message.headers, [HEADER_ROUTING_KEY]: routingKey, [HEADER_QUEUE]: queue };
    let target: { exchange: string; routingKey: string };
    if (outcome.kind === 'retry') {
      const retryQueue = retryQueueName(queue, outcome.delayMs);
      if (!connected.retryQueues.has(retryQueue)) {
        await connected.publishChannel.assertQueue(retryQueue, { durable: true, arguments: retryQueueArguments(queue, outcome.delayMs) });
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

  /** @internal */
  handled(queue: string, outcome: 'ack' | 'retry' | 'dead_letter'): void {
    this.metrics.handled(queue, outcome);
  }

  /** @internal The connection subscriptions attach to, if any. */
  get model(): ChannelModel | undefined {
    return this.current?.model;
  }

  private async cancel(subscription: RabbitSubscription): Promise<void> {
    this.subscriptions.delete(subscription);
    await subscription.cancel();
  }

  private confirmed(channel: ConfirmChannel, items: readonly PublishItem[]): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new BusUnavailableError(`RabbitMQ did not confirm within ${this.confirmTimeoutMs} ms`)), this.confirmTimeoutMs);
    });
    const confirms = Promise.all(items.map((item) => new Promise<void>((resolve, reject) => {
      try {
        channel.publish(item.exchange, item.routingKey, item.content, {
          persistent: true,
          contentType: 'application/json',
          timestamp: Math.floor(Date.now() / 1000),
          ...item.options,
        }, (err) => (err ? reject(new BusUnavailableError(`publish not confirmed: ${(err as Error).message ?? err}`, { cause: err })) : resolve()));
      } catch (err) {
        reject(new BusUnavailableError(`publish failed: ${(err as Error).message}`, { cause: err }));
      }
    })));
    return Promise.race([confirms.then(() => undefined), timeout]).finally(() => clearTimeout(timer));
  }

  private open(): Promise<void> {
    this.opening ??= this.doOpen().finally(() => { this.opening = undefined; });
    return this.opening;
  }

  private async doOpen(): Promise<void> {
    const url = new URL(this.options.url);
    if (!url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(this.options.heartbeatSeconds ?? 5));
    const model = await amqp.connect(url.toString(), {
      ...amqpSocketOptions(this.options.url, this.options.tls),
      clientProperties: { connection_name: this.connectionName },
      timeout: 5_000,
    });
    if (!coalesceFrameWrites(model)) this.logger.debug('amqplib internals changed: frames are written one by one');
    model.on('error', (err: Error) => this.logger.warn('RabbitMQ connection error', { err: err.message }));
    model.on('close', () => this.onConnectionLost(model));
    try {
      const publishChannel = await model.createConfirmChannel();
      publishChannel.on('error', (err: Error) => this.logger.warn('RabbitMQ publish channel error', { err: err.message }));
      publishChannel.on('close', () => {
        // A channel-level error (never expected) closes only the channel: start afresh.
        if (this.current?.publishChannel === publishChannel && !this.closed) void model.close().catch(() => undefined);
      });
      await publishChannel.assertExchange(this.exchange, 'topic', { durable: true });
      await publishChannel.assertExchange(dlxName(this.exchange), 'direct', { durable: true });
      if (this.closed) throw new Error('closed while connecting');
      const returned = new Set<string>();
      // The broker sends basic.return before the confirm of an unroutable mandatory message.
      publishChannel.on('return', (message: { properties: { messageId?: unknown } }) => {
        if (typeof message.properties.messageId === 'string') returned.add(message.properties.messageId);
      });
      this.current = { model, publishChannel, retryQueues: new Set(), returned };
      for (const subscription of this.subscriptions) await subscription.attach(model);
    } catch (err) {
      this.current = undefined;
      await model.close().catch(() => undefined);
      throw err;
    }
    this.metrics.connected(true);
    if (this.everConnected) this.metrics.reconnected();
    this.logger.info(this.everConnected ? 'reconnected to RabbitMQ' : 'connected to RabbitMQ', {
      exchange: this.exchange, connection: this.connectionName, subscriptions: this.subscriptions.size,
    });
    this.everConnected = true;
    this.reconnectAttempt = 0;
  }

  private onConnectionLost(model: ChannelModel): void {
    if (this.current?.model !== model) return;
    this.current = undefined;
    this.metrics.connected(false);
    for (const subscription of this.subscriptions) subscription.detach();
    if (this.closed) return;
    this.logger.warn('lost the RabbitMQ connection; reconnecting', { connection: this.connectionName });
    this.scheduleReconnect();
  }

  private scheduleReconnect(delayOverrideMs?: number): void {
    if (this.closed || this.reconnectTimer) return;
    const initial = this.options.reconnectInitialDelayMs ?? 200;
    const max = this.options.reconnectMaxDelayMs ?? 10_000;
    const base = Math.min(max, initial * 2 ** this.reconnectAttempt);
    const delay = delayOverrideMs ?? Math.round(base / 2 + Math.random() * (base / 2));
    this.reconnectAttempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.open().catch((err: Error) => {
        this.logger.warn('RabbitMQ reconnect failed', { err: err.message, attempt: this.reconnectAttempt });
        this.scheduleReconnect();
      });
    }, delay);
  }
}

/** One consumer of one queue; re-attached to every new connection until cancelled. */
class RabbitSubscription {
  private channel: Channel | undefined;
  private attachedTo: ChannelModel | undefined;
  private consumerTag: string | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private cancelled = false;
  private readonly dlq: string;

  constructor(
    private readonly bus: RabbitMqBus,
    private readonly options: ConsumeOptions,
    private readonly handler: MessageHandler,
    private readonly logger: Logger,
  ) {
    this.dlq = dlqName(options.queue);
  }

  async attach(model: ChannelModel): Promise<void> {
    // consume() and a (re)connection may both try to attach to the same connection: once is enough.
    if (this.cancelled || this.attachedTo === model) return;
    this.attachedTo = model;
    const { queue, bindings } = this.options;
    const exchange = this.bus.exchange;
    const channel = await model.createChannel();
    channel.on('error', (err: Error) => this.logger.warn('RabbitMQ consumer channel error', { queue, err: err.message }));
    channel.on('close', () => {
      if (this.channel !== channel) return;
      this.channel = undefined;
      this.attachedTo = undefined;
      // The channel died but the connection lives (e.g. a channel-level error): consume again.
      if (!this.cancelled && this.bus.model === model) {
        setTimeout(() => {
          if (!this.cancelled && !this.channel && this.bus.model === model) {
            this.attach(model).catch((err: Error) => this.logger.warn('re-subscribing failed', { queue, err: err.message }));
          }
        }, 500).unref();
      }
    });
    try {
      await channel.prefetch(this.options.prefetch ?? DEFAULT_PREFETCH);
      await channel.assertExchange(exchange, 'topic', { durable: true });
      await channel.assertExchange(dlxName(exchange), 'direct', { durable: true });
      await channel.assertQueue(this.dlq, { durable: true });
      await channel.bindQueue(this.dlq, dlxName(exchange), this.dlq);
      await channel.assertQueue(queue, { durable: true, arguments: mainQueueArguments(exchange, queue) });
      for (const pattern of bindings) await channel.bindQueue(queue, exchange, pattern);
      this.channel = channel;
      const { consumerTag } = await channel.consume(queue, (message) => {
        if (message) this.track(this.handle(channel, message));
      }, { noAck: false });
      this.consumerTag = consumerTag;
    } catch (err) {
      this.channel = undefined;
      this.attachedTo = undefined;
      await channel.close().catch(() => undefined);
      throw err;
    }
  }

  /** The connection is gone: its deliveries will come again on the next one. */
  detach(): void {
    this.attachedTo = undefined;
    this.channel = undefined;
    this.consumerTag = undefined;
  }

  async cancel(): Promise<void> {
    this.cancelled = true;
    const channel = this.channel;
    const tag = this.consumerTag;
    if (channel && tag) await channel.cancel(tag).catch(() => undefined);
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    this.channel = undefined;
    if (channel) await channel.close().catch(() => undefined);
  }

  private track(run: Promise<void>): void {
    const tracked = run.catch((err: Error) => this.logger.error('delivery handling failed', { queue: this.options.queue, err: err.message }))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async handle(channel: Channel, message: ConsumeMessage): Promise<void> {
    const queue = this.options.queue;
    const headers = message.properties.headers ?? {};
    const routingKey = typeof headers[HEADER_ROUTING_KEY] === 'string' ? headers[HEADER_ROUTING_KEY] as string : message.fields.routingKey;
    const previous = Number(headers[HEADER_ATTEMPT]);
    // A redelivery (the consumer or its connection died before the ack) is one more attempt.
    const attempt = (Number.isSafeInteger(previous) && previous > 0 ? previous : 1) + (message.fields.redelivered ? 1 : 0);
    const parts = await this.outcomes(message, routingKey, attempt);
    // If a part cannot be parked, the whole delivery goes back to the queue: parts already handled
    // come again, which consumers' idempotency absorbs, as for any redelivery.
    for (const { outcome, forwarded } of parts) {
      if (outcome.kind !== 'ack' && !(await this.park(outcome, forwarded, routingKey, attempt))) {
        await this.giveBack(channel, message);
        return;
      }
    }
    for (const { outcome } of parts) this.bus.handled(queue, outcome.kind === 'dead-letter' ? 'dead_letter' : outcome.kind);
    this.settle(channel, message, 'ack');
  }

  /**
   * What became of a delivery, with what to park for each failed part: one part for a message, one
   * per member for a pack. Members go to the handler as if each had come alone (concurrently, like the
   * deliveries of one prefetch window), and a failed member is parked alone under its own id.
   */
  private async outcomes(message: ConsumeMessage, routingKey: string, attempt: number): Promise<Array<{ outcome: DeliveryOutcome; forwarded: ForwardedMessage }>> {
    const whole = delivered(message);
    if (message.properties.contentType === PACK_CONTENT_TYPE) {
      let members: PackMember[];
      try {
        members = decodePack(message.content);
      } catch (err) {
        return [{ outcome: { kind: 'dead-letter', reason: 'malformed', error: `unreadable pack: ${(err as Error).message}` }, forwarded: whole }];
      }
      return Promise.all(members.map(async (member) => ({
        outcome: await this.run({ id: member.id, routingKey, body: member.body, attempt }),
        forwarded: { content: Buffer.from(member.body, 'utf8'), messageId: member.id, headers: whole.headers, contentType: 'application/json' },
      })));
    }
    if (!whole.messageId) return [{ outcome: { kind: 'dead-letter', reason: 'malformed', error: 'message has no message id' }, forwarded: whole }];
    return [{ outcome: await this.run({ id: whole.messageId, routingKey, body: message.content.toString('utf8'), attempt }), forwarded: whole }];
  }

  private async run(incoming: IncomingMessage): Promise<DeliveryOutcome> {
    let failure: unknown;
    try {
      await this.handler(incoming);
    } catch (err) {
      failure = err ?? new Error('handler failed');
    }
    return decideOutcome(failure, incoming.attempt, this.options);
  }

  /** Moves a failed message to its retry or dead-letter queue; false when the broker did not take it. */
  private async park(outcome: Exclude<DeliveryOutcome, { kind: 'ack' }>, forwarded: ForwardedMessage, routingKey: string, attempt: number): Promise<boolean> {
    const queue = this.options.queue;
    try {
      await this.bus.forward(queue, outcome, forwarded, routingKey, attempt);
    } catch (err) {
      this.logger.warn('could not move a failed message; returning its delivery to the queue', { queue, err: (err as Error).message });
      return false;
    }
    if (outcome.kind === 'dead-letter') {
      this.logger.warn('message dead-lettered', { queue, dlq: this.dlq, reason: outcome.reason, error: outcome.error, attempt });
    }
    return true;
  }

  /** Could not park it: give the delivery back to the queue (after a pause, so a broken broker is not hammered). */
  private async giveBack(channel: Channel, message: ConsumeMessage): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    this.settle(channel, message, 'nack');
  }

  private settle(channel: Channel, message: ConsumeMessage, how: 'ack' | 'nack'): void {
    try {
      if (how === 'ack') channel.ack(message);
      else channel.nack(message, false, true);
    } catch {
      // The channel closed meanwhile: the broker redelivers the message on the next connection.
    }
  }
}

function delivered(message: ConsumeMessage): ForwardedMessage {
  return {
    content: message.content,
    messageId: typeof message.properties.messageId === 'string' ? message.properties.messageId : undefined,
    headers: message.properties.headers ?? {},
    contentType: message.properties.contentType as string | undefined,
  };
}

function isExpiring(m: OutgoingMessage): boolean {
  const expiresInMs = (m as ExpiringMessage).expiresInMs;
  return expiresInMs !== undefined && expiresInMs > 0;
}

import type { Channel, ChannelModel, ConsumeMessage } from 'amqplib';
import type { ConsumeOptions, IncomingMessage, Logger, MessageHandler } from '@vanish/common';
import { decideOutcome, DEFAULT_PREFETCH, type DeliveryOutcome } from './delivery-policy';
import { decodePack, PACK_CONTENT_TYPE, type PackMember } from './message-packs';
import { declareConsumerQueue, declareExchanges, dlqName, makeWayForDisposableQueue, HEADER_ATTEMPT, HEADER_ROUTING_KEY, type QueueSettings } from './rabbitmq-topology';

/** What forward() moves to a retry queue or a dead-letter queue: a delivery, or one member of a pack. */
export interface ForwardedMessage {
  content: Buffer;
  messageId: string | undefined;
  headers: Record<string, unknown>;
  contentType: string | undefined;
}

/** What a subscription needs from its bus. */
export interface SubscriptionHost {
  readonly exchange: string;
  /** The type (and delivery limit) of the queues it declares. */
  readonly queueSettings: QueueSettings;
  /** The connection subscriptions attach to, if any. */
  readonly model: ChannelModel | undefined;
  /** True while the broker is away (its outage is logged once by the connection). */
  readonly isBrokerDown?: boolean;
  /** Moves a message to a retry queue or a dead-letter queue (rejects when the broker did not take it). */
  forward(queue: string, outcome: Exclude<DeliveryOutcome, { kind: 'ack' }>, message: ForwardedMessage, routingKey: string, attempt: number): Promise<void>;
  handled(queue: string, outcome: 'ack' | 'retry' | 'dead_letter'): void;
}

/** One consumer of one queue; re-attached to every new connection until cancelled. */
export class RabbitSubscription {
  private channel: Channel | undefined;
  private attachedTo: ChannelModel | undefined;
  private consumerTag: string | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private cancelled = false;
  private readonly dlq: string;

  constructor(
    private readonly bus: SubscriptionHost,
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
    const { queue, bindings, disposable } = this.options;
    const exchange = this.bus.exchange;
    let channel: Channel;
    try {
      channel = await model.createChannel();
    } catch (err) {
      this.attachedTo = undefined;
      throw err;
    }
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
      await declareExchanges(channel, exchange);
      const consumerQueue = { queue, bindings, disposable };
      const plan = await makeWayForDisposableQueue(model, exchange, consumerQueue, this.bus.queueSettings, this.logger);
      await declareConsumerQueue(channel, exchange, consumerQueue, this.bus.queueSettings, plan === 'use-existing');
      this.channel = channel;
      const { consumerTag } = await channel.consume(queue, (message) => {
        if (message) {
          this.track(this.handle(channel, message));
          return;
        }
        // The broker cancelled this consumer (its queue was deleted, or moved away): without this the
        // subscription would stay silent. Closing the channel subscribes again (the close handler above).
        this.logger.warn('consumer cancelled by the broker: subscribing again', { queue });
        channel.close().catch(() => undefined);
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
      // While the broker is away this is part of its outage (logged once): each such message at debug.
      const log = this.bus.isBrokerDown ? this.logger.debug : this.logger.warn;
      log.call(this.logger, 'could not move a failed message; returning its delivery to the queue', { queue, err: (err as Error).message });
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

import type { Channel } from 'amqplib';
import type { Logger } from '@vanish/common';

/**
 * Names of everything RabbitMqBus declares, in one place (docs/events.md draws the picture):
 * - `<exchange>` durable topic exchange, where publishers send (`note.*`, `mail.send`, `health.*`);
 * - `<exchange>.dlx` durable direct exchange for dead letters;
 * - `<queue>` durable queue bound to `<exchange>` by the consumer's patterns;
 * - `<queue>.dlq` durable queue bound to `<exchange>.dlx` by its own name;
 * - `<queue>.retry.<ms>` durable queue per retry delay with `x-message-ttl` = ms that
 *   dead-letters back to `<queue>` through the default exchange (the broker holds the delay).
 * A disposable queue (heartbeats: messages that expire) has no broker-side dead-lettering, so what
 * expires there is dropped; the bus still sends a message its handler refuses to `<queue>.dlq`.
 * Every queue is of the one type QueueSettings names (quorum in production: replicated, see
 * docs/scaling.md); declareTopology() is the one place that declares them, at start-up and at deploy time.
 */
export const dlxName = (exchange: string): string => `${exchange}.dlx`;
export const dlqName = (queue: string): string => `${queue}.dlq`;
export const retryQueueName = (queue: string, delayMs: number): string => `${queue}.retry.${delayMs}`;

/** Headers the bus puts on the messages it moves. */
export const HEADER_ATTEMPT = 'x-vanish-attempt';
export const HEADER_ROUTING_KEY = 'x-vanish-routing-key';
export const HEADER_QUEUE = 'x-vanish-queue';
export const HEADER_DEAD_REASON = 'x-vanish-dead-letter-reason';
export const HEADER_ERROR = 'x-vanish-error';

export const QUEUE_TYPES = ['classic', 'quorum'] as const;
export type QueueType = (typeof QUEUE_TYPES)[number];

/**
 * Redeliveries (a consumer or its connection died before the ack, or the bus gave a delivery back)
 * after which a quorum queue dead-letters a message by itself: a message that crashes every consumer
 * that takes it ends in `<queue>.dlq` instead of looping for ever. The bus's own attempt count
 * (maxAttempts) covers handler errors, which go through retry queues and never count here.
 */
export const DEFAULT_DELIVERY_LIMIT = 50;

export interface QueueSettings {
  /** `quorum` (replicated, Raft; the production default) or `classic` (one node). */
  type: QueueType;
  /** Quorum queues only: see DEFAULT_DELIVERY_LIMIT. */
  deliveryLimit?: number;
}

export const CLASSIC_QUEUES: QueueSettings = { type: 'classic' };

/** What a queue's type adds to its arguments. */
function typeArguments(settings: QueueSettings, deadLetters: boolean): Record<string, unknown> {
  if (settings.type === 'classic') return {};
  return {
    'x-queue-type': 'quorum',
    // At-least-once dead-lettering (RabbitMQ 3.10+): the broker keeps a dead letter until the
    // target queue confirmed it, which needs publishes refused (not old messages dropped) when full.
    ...(deadLetters ? { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' } : {}),
  };
}

export function mainQueueArguments(exchange: string, queue: string, settings: QueueSettings = CLASSIC_QUEUES, disposable = false): Record<string, unknown> {
  return {
    ...(disposable ? {} : { 'x-dead-letter-exchange': dlxName(exchange), 'x-dead-letter-routing-key': dlqName(queue) }),
    ...typeArguments(settings, !disposable),
    ...(settings.type === 'quorum' ? { 'x-delivery-limit': settings.deliveryLimit ?? DEFAULT_DELIVERY_LIMIT } : {}),
  };
}

export function retryQueueArguments(queue: string, delayMs: number, settings: QueueSettings = CLASSIC_QUEUES): Record<string, unknown> {
  return { 'x-message-ttl': delayMs, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue, ...typeArguments(settings, true) };
}

export function deadLetterQueueArguments(settings: QueueSettings = CLASSIC_QUEUES): Record<string, unknown> {
  return typeArguments(settings, false);
}

/** A consumer's queue as the topology knows it. */
export interface ConsumerQueue {
  queue: string;
  bindings: readonly string[];
  /** The retry queues to declare ahead (the bus also declares one the first time it needs it). */
  retryDelaysMs?: readonly number[];
  /** See ConsumeOptions.disposable: what expires is dropped, not dead-lettered. */
  disposable?: boolean;
}

export async function declareExchanges(channel: Channel, exchange: string): Promise<void> {
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertExchange(dlxName(exchange), 'direct', { durable: true });
}

export async function declareRetryQueue(channel: Channel, queue: string, delayMs: number, settings: QueueSettings): Promise<string> {
  const name = retryQueueName(queue, delayMs);
  await channel.assertQueue(name, { durable: true, arguments: retryQueueArguments(queue, delayMs, settings) });
  return name;
}

/**
 * A consumer queue with its dead-letter queue, bindings and retry queues. With `existing`, the main
 * queue is used as the broker has it (checked, not declared): see makeWayForDisposableQueue.
 */
export async function declareConsumerQueue(channel: Channel, exchange: string, consumer: ConsumerQueue, settings: QueueSettings, existing = false): Promise<void> {
  const dlq = dlqName(consumer.queue);
  await channel.assertQueue(dlq, { durable: true, arguments: deadLetterQueueArguments(settings) });
  await channel.bindQueue(dlq, dlxName(exchange), dlq);
  if (existing) await channel.checkQueue(consumer.queue);
  else await channel.assertQueue(consumer.queue, { durable: true, arguments: mainQueueArguments(exchange, consumer.queue, settings, consumer.disposable) });
  for (const pattern of consumer.bindings) await channel.bindQueue(consumer.queue, exchange, pattern);
  for (const delayMs of new Set(consumer.retryDelaysMs ?? [])) await declareRetryQueue(channel, consumer.queue, delayMs, settings);
}

/** What opens channels: amqplib's ChannelModel. */
export interface ChannelOpener {
  createChannel(): Promise<Channel>;
}

/** `declare`: declare the queue as ConsumerQueue says; `use-existing`: an older shape is in use, take it as it is. */
export type DisposableQueuePlan = 'declare' | 'use-existing';

const isRefusal = (err: unknown): boolean => /PRECONDITION_FAILED|RESOURCE_LOCKED/.test((err as Error).message);

/** Runs one operation on a channel of its own: a refusal closes the channel it happens on. */
async function onOwnChannel<T>(opener: ChannelOpener, work: (channel: Channel) => Promise<T>): Promise<T> {
  const channel = await opener.createChannel();
  channel.on('error', () => undefined); // a refusal is an answer here, handled by the caller
  try {
    return await work(channel);
  } finally {
    await channel.close().catch(() => undefined);
  }
}

/**
 * Makes way for a disposable queue. One of its name declared before with other arguments (with
 * dead-lettering, as heartbeat queues first were, or of another type) is refused by the broker
 * (PRECONDITION_FAILED); it holds only messages that are worthless later, so it is deleted, but only
 * when no consumer uses it (an older replica still consuming keeps it: this one then consumes from
 * it as it is, and the next start replaces it). Deleting a queue cancels its consumers, which the
 * subscription answers by subscribing again, so two replicas replacing it at once both end on the new one.
 */
export async function makeWayForDisposableQueue(opener: ChannelOpener, exchange: string, consumer: ConsumerQueue, settings: QueueSettings, logger?: Logger): Promise<DisposableQueuePlan> {
  if (!consumer.disposable) return 'declare';
  const arguments_ = mainQueueArguments(exchange, consumer.queue, settings, true);
  for (let round = 0; round < 3; round += 1) {
    const fits = await onOwnChannel(opener, async (channel) => {
      try {
        await channel.assertQueue(consumer.queue, { durable: true, arguments: arguments_ });
        return true;
      } catch (err) {
        if (isRefusal(err)) return false;
        throw err;
      }
    });
    if (fits) return 'declare';
    const deleted = await onOwnChannel(opener, async (channel) => {
      try {
        // Quorum queues refuse queue.delete's if-unused (with a connection error): count first. A
        // consumer arriving in between is cancelled, and subscribes again.
        const { consumerCount } = await channel.checkQueue(consumer.queue);
        if (consumerCount > 0) return undefined;
        return await channel.deleteQueue(consumer.queue);
      } catch (err) {
        if (isRefusal(err) || /NOT_FOUND/.test((err as Error).message)) return undefined; // gone meanwhile: probe again
        throw err;
      }
    });
    if (deleted) {
      logger?.warn('disposable queue declared anew: it had other arguments', { queue: consumer.queue, dropped: deleted.messageCount });
      continue;
    }
    // In use: by an older replica (the queue keeps its old shape), or by a replica that replaced it a moment ago.
  }
  logger?.warn('disposable queue has other arguments and is in use: consuming from it as it is until the next start', { queue: consumer.queue });
  return 'use-existing';
}

/** The whole topology: exchanges, then every consumer's queues (idempotent; a differing queue type fails, except for disposable queues, replaced). */
export async function declareTopology(opener: ChannelOpener, topology: { exchange: string; consumers: readonly ConsumerQueue[]; settings: QueueSettings }, logger?: Logger): Promise<void> {
  const plans: DisposableQueuePlan[] = [];
  for (const consumer of topology.consumers) plans.push(await makeWayForDisposableQueue(opener, topology.exchange, consumer, topology.settings, logger));
  const channel = await opener.createChannel();
  try {
    await declareExchanges(channel, topology.exchange);
    for (const [i, consumer] of topology.consumers.entries()) {
      await declareConsumerQueue(channel, topology.exchange, consumer, topology.settings, plans[i] === 'use-existing');
    }
  } finally {
    await channel.close().catch(() => undefined);
  }
}

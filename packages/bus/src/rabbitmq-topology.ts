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

/** A consumer queue with its dead-letter queue, bindings and retry queues. */
export async function declareConsumerQueue(channel: Channel, exchange: string, consumer: ConsumerQueue, settings: QueueSettings): Promise<void> {
  const dlq = dlqName(consumer.queue);
  await channel.assertQueue(dlq, { durable: true, arguments: deadLetterQueueArguments(settings) });
  await channel.bindQueue(dlq, dlxName(exchange), dlq);
  await channel.assertQueue(consumer.queue, { durable: true, arguments: mainQueueArguments(exchange, consumer.queue, settings, consumer.disposable) });
  for (const pattern of consumer.bindings) await channel.bindQueue(consumer.queue, exchange, pattern);
  for (const delayMs of new Set(consumer.retryDelaysMs ?? [])) await declareRetryQueue(channel, consumer.queue, delayMs, settings);
}

/** What opens channels: amqplib's ChannelModel. */
export interface ChannelOpener {
  createChannel(): Promise<Channel>;
}

/**
 * Makes way for a disposable queue: one of its name declared before with other arguments (with
 * dead-lettering, as heartbeat queues first were, or of another type) is refused by the broker (PRECONDITION_FAILED),
 * and since it holds only messages that are worthless later it is deleted, to be declared anew by
 * declareConsumerQueue. Each probe runs on a channel of its own because a refusal closes the channel.
 * Returns whether a queue was replaced.
 */
export async function makeWayForDisposableQueue(opener: ChannelOpener, exchange: string, consumer: ConsumerQueue, settings: QueueSettings, logger?: Logger): Promise<boolean> {
  if (!consumer.disposable) return false;
  const probe = await opener.createChannel();
  probe.on('error', () => undefined); // the refusal is the answer looked for, reported below
  try {
    await probe.assertQueue(consumer.queue, { durable: true, arguments: mainQueueArguments(exchange, consumer.queue, settings, true) });
    await probe.close();
    return false;
  } catch (err) {
    if (!/PRECONDITION_FAILED/.test((err as Error).message)) throw err;
  }
  const cleaner = await opener.createChannel();
  try {
    const { messageCount } = await cleaner.deleteQueue(consumer.queue);
    logger?.warn('disposable queue declared anew: it had other arguments', { queue: consumer.queue, dropped: messageCount });
  } finally {
    await cleaner.close().catch(() => undefined);
  }
  return true;
}

/** The whole topology: exchanges, then every consumer's queues (idempotent; a differing queue type fails, except for disposable queues, replaced). */
export async function declareTopology(opener: ChannelOpener, topology: { exchange: string; consumers: readonly ConsumerQueue[]; settings: QueueSettings }, logger?: Logger): Promise<void> {
  for (const consumer of topology.consumers) await makeWayForDisposableQueue(opener, topology.exchange, consumer, topology.settings, logger);
  const channel = await opener.createChannel();
  try {
    await declareExchanges(channel, topology.exchange);
    for (const consumer of topology.consumers) await declareConsumerQueue(channel, topology.exchange, consumer, topology.settings);
  } finally {
    await channel.close().catch(() => undefined);
  }
}

import { randomUUID } from 'node:crypto';
import type { ConfirmChannel, Options } from 'amqplib';
import type { OutgoingMessage } from '@vanish/common';
import { PACK_CONTENT_TYPE, encodePack, packMessages } from './message-packs';

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

/** One AMQP message to publish. */
export interface PublishItem {
  exchange: string;
  routingKey: string;
  content: Buffer;
  options: Options.Publish;
}

/** An AMQP message and the ids of the messages it carries (one, or a pack's members). */
export interface SentItem {
  item: PublishItem;
  memberIds: string[];
}

/**
 * One AMQP message per message, or per pack of messages of a packed routing key (message-packs.ts).
 * Expiring messages always go alone.
 */
export function publishItems(exchange: string, messages: readonly OutgoingMessage[], packed?: (routingKey: string) => boolean): SentItem[] {
  const units = packMessages(messages, (m) => !isExpiring(m) && (packed?.(m.routingKey) ?? false));
  return units.map((unit) => ('alone' in unit ? alone(exchange, unit.alone) : {
    memberIds: unit.members.map((m) => m.id),
    item: {
      exchange, routingKey: unit.routingKey, content: encodePack(unit.members),
      options: { messageId: `pack-${randomUUID()}`, mandatory: true, contentType: PACK_CONTENT_TYPE },
    },
  }));
}

/** A message sent as itself. */
function alone(exchange: string, m: OutgoingMessage): SentItem {
  const expiresInMs = isExpiring(m) ? (m as ExpiringMessage).expiresInMs! : undefined;
  return {
    memberIds: [m.id],
    item: {
      exchange,
      routingKey: m.routingKey,
      content: Buffer.from(m.body, 'utf8'),
      // Mandatory: on a fresh broker no consumer has declared its queue yet, and a message no queue
      // takes would be confirmed and dropped. Returned, it fails the publish and stays in the outbox.
      // Expiring messages (heartbeats) are worthless later and may be dropped.
      options: { messageId: m.id, mandatory: expiresInMs === undefined, ...(expiresInMs !== undefined ? { expiration: String(Math.round(expiresInMs)) } : {}) },
    },
  };
}

function isExpiring(m: OutgoingMessage): boolean {
  const expiresInMs = (m as ExpiringMessage).expiresInMs;
  return expiresInMs !== undefined && expiresInMs > 0;
}

/**
 * Publishes persistent messages on a confirm channel and resolves when the broker confirmed every
 * one; rejects with BusUnavailableError on a nack, a failed write, or no confirm within timeoutMs
 * (a stalled broker must not hang the caller).
 */
export function publishConfirmed(channel: ConfirmChannel, items: readonly PublishItem[], timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BusUnavailableError(`RabbitMQ did not confirm within ${timeoutMs} ms`)), timeoutMs);
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

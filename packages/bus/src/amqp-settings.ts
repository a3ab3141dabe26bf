import type { EnvReader } from '@vanish/common';
import { DEFAULT_DELIVERY_LIMIT, QUEUE_TYPES, type QueueSettings } from './rabbitmq-topology';

/**
 * The broker address(es), read alike by every service: AMQP_URLS, else AMQP_URL; either may list
 * the nodes of one cluster, comma-separated (the bus connects to any live one and fails over on loss).
 * Returned as one comma-separated string (RabbitMqBus's `url`); each part must be amqp:// or amqps://.
 */
export function readAmqpUrl(reader: EnvReader): string | undefined {
  const name = reader.str('AMQP_URLS') !== undefined ? 'AMQP_URLS' : 'AMQP_URL';
  const value = reader.str(name);
  if (value === undefined) return undefined;
  const urls = value.split(',').map((url) => url.trim()).filter((url) => url !== '');
  if (urls.length === 0) reader.problem(`${name}: no address given`);
  for (const url of urls) {
    let protocol: string | undefined;
    try {
      protocol = new URL(url).protocol;
    } catch {
      reader.problem(`${name}: not a valid URL (or comma-separated list of URLs)`);
      continue;
    }
    if (protocol !== 'amqp:' && protocol !== 'amqps:') reader.problem(`${name}: expected amqp: or amqps: URLs, got "${protocol}"`);
  }
  return urls.join(',');
}

/**
 * AMQP_QUEUE_TYPE (`quorum` or `classic`; default quorum with NODE_ENV=production, classic otherwise:
 * a development broker is one node) and AMQP_DELIVERY_LIMIT (quorum queues: redeliveries before the
 * broker dead-letters a message that crashes its consumers). A queue's type is fixed when it is first
 * declared: docs/scaling.md says how to move from classic to quorum without losing a message.
 */
export function readQueueSettings(reader: EnvReader): QueueSettings {
  const type = reader.oneOf('AMQP_QUEUE_TYPE', QUEUE_TYPES, reader.isProduction ? 'quorum' : 'classic');
  const deliveryLimit = reader.int('AMQP_DELIVERY_LIMIT', DEFAULT_DELIVERY_LIMIT, { min: 1, max: 100_000 });
  return type === 'quorum' ? { type, deliveryLimit } : { type };
}

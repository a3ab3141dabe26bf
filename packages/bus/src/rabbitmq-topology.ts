/**
 * Names of everything RabbitMqBus declares, in one place (docs/events.md draws the picture):
 * - `<exchange>` durable topic exchange, where publishers send (`note.*`, `mail.send`, `health.*`);
 * - `<exchange>.dlx` durable direct exchange for dead letters;
 * - `<queue>` durable queue bound to `<exchange>` by the consumer's patterns;
 * - `<queue>.dlq` durable queue bound to `<exchange>.dlx` by its own name;
 * - `<queue>.retry.<ms>` durable queue per retry delay with `x-message-ttl` = ms that
 *   dead-letters back to `<queue>` through the default exchange (the broker holds the delay).
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

export function mainQueueArguments(exchange: string, queue: string): Record<string, unknown> {
  return { 'x-dead-letter-exchange': dlxName(exchange), 'x-dead-letter-routing-key': dlqName(queue) };
}

export function retryQueueArguments(queue: string, delayMs: number): Record<string, unknown> {
  return { 'x-message-ttl': delayMs, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': queue };
}

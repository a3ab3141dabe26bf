import { type ConsumerQueue } from '@vanish/bus';
import { HEARTBEATS_QUEUE, NOTE_EVENTS_QUEUE, NOTE_EVENTS_RETRY_DELAYS_MS } from '@vanish/stats';
import { MAIL_ROUTING_KEY } from '@vanish/mailer';
import { REQUEST_SUBMITTED_EVENT, WEBHOOK_EVENT_NAMES } from '@vanish/common';
import { DEFAULT_RETRY_DELAYS_MS } from '@vanish/webhooks';

/** The mailer's MAIL_QUEUE default (services/mailer/src/config.ts). */
export const DEFAULT_MAIL_QUEUE = 'mailer.mail-commands';
/** The webhooks service's WEBHOOK_QUEUE default (services/webhooks/src/config.ts). */
export const DEFAULT_WEBHOOK_QUEUE = 'webhooks.note-events';

/**
 * Every consumer queue of vanish with its bindings: what stats and the mailer declare when they
 * start, listed in one place so the whole topology can be declared before any of them runs (at
 * deploy time: cli/declare-topology.ts) and checked against the broker permissions.
 */
export function vanishConsumerQueues(
  options: { statsQueuePrefix?: string; mailQueue?: string; webhookQueue?: string; webhookRetryDelaysMs?: readonly number[] } = {},
): ConsumerQueue[] {
  const prefix = options.statsQueuePrefix ?? '';
  return [
    { queue: `${prefix}${NOTE_EVENTS_QUEUE}`, bindings: ['note.*'], retryDelaysMs: NOTE_EVENTS_RETRY_DELAYS_MS },
    { queue: `${prefix}${HEARTBEATS_QUEUE}`, bindings: ['health.*'], disposable: true },
    { queue: options.mailQueue ?? DEFAULT_MAIL_QUEUE, bindings: [MAIL_ROUTING_KEY] },
    { queue: options.webhookQueue ?? DEFAULT_WEBHOOK_QUEUE, bindings: [...WEBHOOK_EVENT_NAMES, REQUEST_SUBMITTED_EVENT], retryDelaysMs: options.webhookRetryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS },
  ];
}

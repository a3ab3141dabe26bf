// What each service may do on RabbitMQ, derived from the bus topology (packages/bus's names for
// dead-letter exchanges, dead-letter and retry queues) and from the queues and routing keys each
// service uses. The shipped definitions files and the permissions script must say exactly this
// (test/deploy/broker-permissions.int.test.ts checks both, and proves it on a broker of its own).
//
// RabbitMQ checks (AMQP 0-9-1): declaring or deleting an exchange or queue needs `configure` on it;
// declaring a queue with a dead-letter exchange needs `read` on the queue and `write` on that
// exchange; binding needs `write` on the queue and `read` on the exchange; publishing needs `write`
// on the exchange (the default exchange is `amq.default`); consuming and purging need `read` on the
// queue. Topic permissions add a check of the routing key on the topic exchange: `write` on publish,
// `read` on bind.
import { EVENT_NAMES, REQUEST_SUBMITTED_EVENT, WEBHOOK_EVENT_NAMES } from '@vanish/common';
import { dlqName, dlxName, retryQueueName } from '@vanish/bus';
import { HEARTBEATS_QUEUE, NOTE_EVENTS_QUEUE } from '@vanish/stats';
import { MAIL_ROUTING_KEY } from '@vanish/mailer';

export const EXCHANGE = 'vanish';
/** The mailer's MAIL_QUEUE default (services/mailer/src/config.ts; the test checks they agree). */
export const MAIL_QUEUE = 'mailer.mail-commands';
/** The webhooks service's WEBHOOK_QUEUE default (services/webhooks/src/config.ts; the test checks they agree). */
export const WEBHOOK_QUEUE = 'webhooks.note-events';
export const BROKER_USERS = ['notes', 'stats', 'mailer', 'webhooks'] as const;
export type BrokerUser = (typeof BROKER_USERS)[number];

export interface Permission {
  user: BrokerUser;
  configure: string;
  write: string;
  read: string;
}

export interface TopicPermission {
  user: BrokerUser;
  exchange: string;
  write: string;
  read: string;
}

const escape = (name: string): string => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const anyOf = (patterns: readonly string[]): string => (patterns.length === 0 ? '^$' : `^(${patterns.join('|')})$`);

/** A queue the bus declares and the retry and dead-letter queues it declares beside it. */
function queueFamily(queue: string): string {
  const retry = escape(retryQueueName(queue, 0)).replace(/0$/, '[0-9]+');
  return `${escape(queue)}(${escape(dlqName(queue).slice(queue.length))}|${retry.slice(escape(queue).length)})?`;
}

const EXCHANGES = [escape(EXCHANGE), escape(dlxName(EXCHANGE))];
const DEFAULT_EXCHANGE = 'amq\\.default';

/** Consumers: their queues, and what their bindings and their retries and dead letters need. */
function consumer(user: BrokerUser, queues: readonly string[], publishes: boolean): Permission {
  const own = queues.map(queueFamily);
  return {
    user,
    configure: anyOf([...EXCHANGES, ...own]),
    // dead letters go to <exchange>.dlx, retries through the default exchange to <queue>.retry.<ms>
    write: anyOf([...(publishes ? [escape(EXCHANGE)] : []), escape(dlxName(EXCHANGE)), DEFAULT_EXCHANGE, ...own]),
    read: anyOf([...EXCHANGES, ...own]),
  };
}

export const PERMISSIONS: readonly Permission[] = [
  // notes publishes (the outbox relay and heartbeats) and consumes nothing.
  { user: 'notes', configure: anyOf(EXCHANGES), write: anyOf([escape(EXCHANGE)]), read: '^$' },
  // stats consumes note events and heartbeats and publishes nothing of its own.
  consumer('stats', [NOTE_EVENTS_QUEUE, HEARTBEATS_QUEUE], false),
  // the mailer consumes mail commands and publishes its heartbeat.
  consumer('mailer', [MAIL_QUEUE], true),
  // the webhooks service consumes the four SPEC 6 note events and request.submitted (DECISIONS 15), and publishes nothing.
  consumer('webhooks', [WEBHOOK_QUEUE], false),
];

export const TOPIC_PERMISSIONS: readonly TopicPermission[] = [
  {
    user: 'notes', exchange: EXCHANGE,
    write: anyOf([...EVENT_NAMES.map(escape), escape(REQUEST_SUBMITTED_EVENT), escape(MAIL_ROUTING_KEY), escape('health.notes')]),
    read: '^$',
  },
  { user: 'stats', exchange: EXCHANGE, write: '^$', read: anyOf([escape('note.*'), escape('health.*')]) },
  { user: 'mailer', exchange: EXCHANGE, write: anyOf([escape('health.mailer')]), read: anyOf([escape(MAIL_ROUTING_KEY)]) },
  { user: 'webhooks', exchange: EXCHANGE, write: '^$', read: anyOf([...WEBHOOK_EVENT_NAMES, REQUEST_SUBMITTED_EVENT].map(escape)) },
];

/** A RabbitMQ definitions document (rabbitmqctl import_definitions, `load_definitions`) for vhost `/`. */
export function definitions(passwords: Record<BrokerUser, string>, admin?: { name: string; password: string }) {
  const vhost = '/';
  return {
    users: [
      ...(admin ? [{ name: admin.name, password: admin.password, tags: 'administrator' }] : []),
      ...BROKER_USERS.map((name) => ({ name, password: passwords[name], tags: '' })),
    ],
    vhosts: [{ name: vhost }],
    permissions: [
      ...(admin ? [{ user: admin.name, vhost, configure: '.*', write: '.*', read: '.*' }] : []),
      ...PERMISSIONS.map((p) => ({ user: p.user, vhost, configure: p.configure, write: p.write, read: p.read })),
    ],
    topic_permissions: TOPIC_PERMISSIONS.map((p) => ({ user: p.user, vhost, exchange: p.exchange, write: p.write, read: p.read })),
  };
}

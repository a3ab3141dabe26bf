import type {
  ConsumeOptions, IncomingMessage, Logger, MessageConsumer, MessageHandler, MessagePublisher, OutgoingMessage, Subscription,
} from '@vanish/common';
import { silentLogger } from '@vanish/common';
import type { Registry } from 'prom-client';
import { createBusMetrics, type BusMetrics } from './bus-metrics';
import { DEFAULT_PREFETCH, decideOutcome } from './delivery-policy';
import { topicMatches } from './topic-pattern';

/** A message that ended in `<queue>.dlq`, with why. */
export interface DeadLetter {
  message: IncomingMessage;
  reason: 'permanent' | 'max-attempts' | 'malformed';
  error: string;
}

interface Consumer {
  handler: MessageHandler;
  options: ConsumeOptions;
  prefetch: number;
  inFlight: Set<Promise<void>>;
  active: boolean;
}

interface Queue {
  name: string;
  bindings: Set<string>;
  ready: IncomingMessage[];
  consumers: Consumer[];
  nextConsumer: number;
  deadLetters: DeadLetter[];
}

export interface InProcessBusOptions {
  logger?: Logger;
  registry?: Registry;
  /** Messages held while no queue is bound for them (default 10000; 0 drops them as a broker would). */
  maxUnrouted?: number;
}

/**
 * The embedded default (all-in-one on a laptop): a topic exchange in memory with the same
 * delivery rules as RabbitMqBus (`*`/`#` bindings, prefetch, ack after the handler resolves,
 * delayed retries, maxAttempts, `<queue>.dlq`). Queues live from their first consume() until
 * the process ends and keep collecting messages while no consumer is attached (like durable
 * queues). Unlike a broker, a message that no queue is bound for yet is held (up to
 * `maxUnrouted`, oldest dropped first) and handed to the first queue declared later whose
 * bindings match: in one process the queues are declared anew at every start, and the services
 * start one after another, so what notes relays before stats has subscribed is not lost (on
 * RabbitMQ the durable queues already exist). Nothing survives a restart: durability is RabbitMQ's job.
 */
export class InProcessBus implements MessagePublisher, MessageConsumer {
  private readonly queues = new Map<string, Queue>();
  private unrouted: IncomingMessage[] = [];
  private readonly maxUnrouted: number;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly logger: Logger;
  private readonly metrics: BusMetrics;
  private closed = false;

  constructor(options: InProcessBusOptions = {}) {
    this.logger = (options.logger ?? silentLogger).child('bus/in-process');
    this.metrics = createBusMetrics(options.registry, 'in_process');
    this.maxUnrouted = options.maxUnrouted ?? 10_000;
    this.metrics.connected(true);
  }

  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    if (this.closed) throw new Error('in-process bus is closed');
    for (const message of messages) {
      let routed = false;
      for (const queue of this.queues.values()) {
        if ([...queue.bindings].some((pattern) => topicMatches(pattern, message.routingKey))) {
          queue.ready.push({ id: message.id, routingKey: message.routingKey, body: message.body, attempt: 1 });
          this.schedulePump(queue);
          routed = true;
        }
      }
      if (!routed && this.maxUnrouted > 0) {
        this.unrouted.push({ id: message.id, routingKey: message.routingKey, body: message.body, attempt: 1 });
        if (this.unrouted.length > this.maxUnrouted) this.unrouted.shift();
      }
      this.metrics.published(message.routingKey, 1);
    }
  }

  async consume(options: ConsumeOptions, handler: MessageHandler): Promise<Subscription> {
    if (this.closed) throw new Error('in-process bus is closed');
    const queue = this.declareQueue(options.queue, options.bindings);
    const consumer: Consumer = {
      handler, options, prefetch: Math.max(1, options.prefetch ?? DEFAULT_PREFETCH), inFlight: new Set(), active: true,
    };
    queue.consumers.push(consumer);
    this.schedulePump(queue);
    return {
      cancel: async () => {
        consumer.active = false;
        queue.consumers = queue.consumers.filter((c) => c !== consumer);
        while (consumer.inFlight.size > 0) await Promise.allSettled([...consumer.inFlight]);
      },
    };
  }

  /** Declares a queue and its bindings without consuming (so nothing published from now on is dropped). */
  declare(name: string, bindings: readonly string[]): void {
    this.declareQueue(name, bindings);
  }

  private declareQueue(name: string, bindings: readonly string[]): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = { name, bindings: new Set(), ready: [], consumers: [], nextConsumer: 0, deadLetters: [] };
      this.queues.set(name, queue);
    }
    for (const binding of bindings) queue.bindings.add(binding);
    if (this.unrouted.length > 0) {
      const matches = (m: IncomingMessage) => [...queue!.bindings].some((pattern) => topicMatches(pattern, m.routingKey));
      const held = this.unrouted.filter(matches);
      if (held.length > 0) {
        this.unrouted = this.unrouted.filter((m) => !matches(m));
        queue.ready.push(...held);
      }
    }
    return queue;
  }

  /** The content of `<queue>.dlq` (for operators and tests). */
  deadLetters(queue: string): readonly DeadLetter[] {
    return [...(this.queues.get(queue)?.deadLetters ?? [])];
  }

  /** Messages waiting in a queue (not counting those being handled or waiting for a retry). */
  depth(queue: string): number {
    return this.queues.get(queue)?.ready.length ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    const inFlight = [...this.queues.values()].flatMap((q) => q.consumers.flatMap((c) => [...c.inFlight]));
    for (const queue of this.queues.values()) for (const c of queue.consumers) c.active = false;
    await Promise.allSettled(inFlight);
    this.metrics.connected(false);
  }

  private schedulePump(queue: Queue): void {
    // Handlers never run inside publish(): like a broker, delivery is asynchronous.
    setImmediate(() => this.pump(queue));
  }

  private pump(queue: Queue): void {
    while (queue.ready.length > 0 && !this.closed) {
      const consumer = this.pickConsumer(queue);
      if (!consumer) return;
      const message = queue.ready.shift() as IncomingMessage;
      const run = this.deliver(queue, consumer, message).finally(() => {
        consumer.inFlight.delete(run);
        this.pump(queue);
      });
      consumer.inFlight.add(run);
    }
  }

  private pickConsumer(queue: Queue): Consumer | undefined {
    for (let i = 0; i < queue.consumers.length; i += 1) {
      const index = (queue.nextConsumer + i) % queue.consumers.length;
      const consumer = queue.consumers[index];
      if (consumer.active && consumer.inFlight.size < consumer.prefetch) {
        queue.nextConsumer = index + 1;
        return consumer;
      }
    }
    return undefined;
  }

  private async deliver(queue: Queue, consumer: Consumer, message: IncomingMessage): Promise<void> {
    if (!message.id) {
      this.deadLetter(queue, message, 'malformed', 'message has no id');
      return;
    }
    let failure: unknown;
    try {
      await consumer.handler({ ...message });
    } catch (err) {
      failure = err ?? new Error('handler failed');
    }
    const outcome = decideOutcome(failure, message.attempt, consumer.options);
    if (outcome.kind === 'ack') {
      this.metrics.handled(queue.name, 'ack');
    } else if (outcome.kind === 'dead-letter') {
      this.deadLetter(queue, message, outcome.reason, outcome.error);
    } else {
      this.metrics.handled(queue.name, 'retry');
      this.logger.debug('message will be retried', { queue: queue.name, attempt: message.attempt, delayMs: outcome.delayMs });
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        queue.ready.push({ ...message, attempt: message.attempt + 1 });
        this.pump(queue);
      }, outcome.delayMs);
      timer.unref();
      this.timers.add(timer);
    }
  }

  private deadLetter(queue: Queue, message: IncomingMessage, reason: DeadLetter['reason'], error: string): void {
    this.metrics.handled(queue.name, 'dead_letter');
    this.logger.warn('message dead-lettered', { queue: queue.name, dlq: `${queue.name}.dlq`, reason, error, attempt: message.attempt });
    queue.deadLetters.push({ message: { ...message }, reason, error });
  }
}

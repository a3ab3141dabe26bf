/**
 * Messaging ports. Two implementations live in @vanish/bus: an in-process bus (the all-in-one
 * embedded default) and RabbitMQ (amqplib). Domain code and services depend only on these.
 */
export interface OutgoingMessage {
  /** Unique id (the envelope id): consumers are idempotent by it. */
  id: string;
  /** `note.created`, `mail.send`, `health.notes`, ... */
  routingKey: string;
  /** JSON text of the envelope. */
  body: string;
}

export interface MessagePublisher {
  /** Resolves only when every message is confirmed by the broker (persistent, confirm channel). */
  publish(messages: readonly OutgoingMessage[]): Promise<void>;
}

export interface IncomingMessage {
  id: string;
  routingKey: string;
  body: string;
  /** 1 on first delivery; counts redeliveries and retries. */
  attempt: number;
}

/** Thrown by a handler for a message that can never succeed: it goes to the dead-letter queue at once. */
export class PermanentMessageFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentMessageFailure';
  }
}

/** Thrown by a handler to be tried again after a delay held by the broker (not by a sleep). */
export class RetryMessageLater extends Error {
  constructor(message: string, readonly delayMs?: number, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryMessageLater';
  }
}

export type MessageHandler = (message: IncomingMessage) => Promise<void>;

export interface ConsumeOptions {
  /** Durable queue name, e.g. `stats.note-events`. */
  queue: string;
  /** Routing-key patterns bound to the queue, e.g. `note.*`. */
  bindings: readonly string[];
  prefetch?: number;
  /** Deliveries before a failing message is dead-lettered (any error other than the two above). */
  maxAttempts?: number;
  /** Delays for RetryMessageLater, by attempt; the last one repeats until maxAttempts. */
  retryDelaysMs?: readonly number[];
  /**
   * The queue carries only messages that are worthless later (heartbeats, which expire): what expires
   * there is dropped by the broker, never dead-lettered. A message the handler refuses still goes to
   * `<queue>.dlq`.
   */
  disposable?: boolean;
}

export interface Subscription {
  /** Stops new deliveries and waits for the handlers in flight. */
  cancel(): Promise<void>;
}

export interface MessageConsumer {
  consume(options: ConsumeOptions, handler: MessageHandler): Promise<Subscription>;
}

/** A committed outbox row waiting to be relayed. */
export interface OutboxRow {
  seq: number;
  id: string;
  routingKey: string;
  body: string;
}

/** The notes service's outbox, seen from the relay. */
export interface OutboxStore {
  /** Claims up to `limit` unpublished rows for `leaseMs`; rows claimed by a live relay are skipped. */
  claim(limit: number, leaseMs: number): Promise<OutboxRow[]>;
  /**
   * Extends the lease of rows this relay claimed (and whose lease has not run out) to `leaseMs`
   * from now; answers how many rows it extended. A live relay renews short leases, so that the
   * rows of a relay that died come back within seconds.
   */
  renewLease(seqs: readonly number[], leaseMs: number): Promise<number>;
  /** Gives claimed rows back at once (a relay that stops with rows it did not publish). */
  releaseLease(seqs: readonly number[]): Promise<void>;
  /** Deletes the rows (and so any sealed payload) once the broker confirmed them. */
  markPublished(seqs: readonly number[]): Promise<void>;
  /**
   * Rows waiting and the age of the oldest, for metrics and alerts. A store may answer an upper bound for a
   * long backlog rather than read all of it (notes' knex store does past 2,000 rows); a short one is exact.
   */
  backlog(): Promise<{ count: number; oldestAgeSeconds: number }>;
}

/**
 * Some of a batch were confirmed and some were not (e.g. no queue takes their routing key yet):
 * the publisher names the confirmed ones so that only the others are sent again.
 */
export class PartialPublishError extends Error {
  constructor(message: string, readonly confirmedIds: readonly string[]) {
    super(message);
    this.name = 'PartialPublishError';
  }
}

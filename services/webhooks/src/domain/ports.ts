/** One signed POST to a receiver. */
export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SendResult {
  status: number;
  durationMs: number;
}

/** Sends with SSRF protection; throws when the target is refused or the exchange fails (timeout included). */
export interface WebhookSender {
  send(request: WebhookRequest): Promise<SendResult>;
}

/** delivered (2xx), gone (410), refused (target not public: never retried), failed (will be retried). */
export type DeliveryStatus = 'delivered' | 'gone' | 'refused' | 'failed';

/** What is known of one event before it is delivered. */
export interface DeliveryState {
  /** By target key: its status and the delivery attempts made so far. */
  records: Map<string, { status: DeliveryStatus; attempts: number }>;
  /** The note's own webhook answered 410 Gone to an earlier event. */
  gone: boolean;
}

/**
 * Delivery records: ids, outcomes and counts only, never a payload, URL or secret. Called once per
 * event and target concurrently (a prefetch window at a time); an implementation may serve
 * concurrent calls with shared statements, but each promise settles only once its own read or
 * write is done (the message is acknowledged after that).
 */
export interface DeliveryStore {
  /** The records of `eventId` and whether `noteRef`'s webhook is gone: one lookup per event. */
  stateOf(eventId: string, noteRef: string): Promise<DeliveryState>;
  /** Resolves once the record is committed. */
  record(eventId: string, targetKey: string, status: DeliveryStatus, attempts: number, httpStatus: number | null, now: Date): Promise<void>;
  /** A note's webhook answered 410 Gone: no more deliveries to it. */
  markGone(noteRef: string, now: Date): Promise<void>;
  /** Deletes records older than `cutoff`; returns how many. */
  prune(cutoff: Date): Promise<number>;
  ping(): Promise<boolean>;
}

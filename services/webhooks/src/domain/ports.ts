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

/** Delivery records: ids, outcomes and counts only, never a payload, URL or secret. */
export interface DeliveryStore {
  /** What is recorded of `eventId`, by target key: its status and the delivery attempts made so far. */
  recordsOf(eventId: string): Promise<Map<string, { status: DeliveryStatus; attempts: number }>>;
  record(eventId: string, targetKey: string, status: DeliveryStatus, attempts: number, httpStatus: number | null, now: Date): Promise<void>;
  /** A note's webhook answered 410 Gone: no more deliveries to it. */
  markGone(noteRef: string, now: Date): Promise<void>;
  isGone(noteRef: string): Promise<boolean>;
  /** Deletes records older than `cutoff`; returns how many. */
  prune(cutoff: Date): Promise<number>;
  ping(): Promise<boolean>;
}

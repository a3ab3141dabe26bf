import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import {
  PermanentMessageFailure, REQUEST_SUBMITTED_EVENT, RetryMessageLater, WEBHOOK_EVENT_NAMES,
  type Clock, type IncomingMessage, type Logger, type MessageOpening, type NoteEvent, type SealedWebhookPart, type WebhookTarget,
} from '@vanish/common';
import type { OperatorSubscription } from '../config';
import type { WebhooksMetrics } from '../metrics';
import type { HostGuard } from './host-guard';
import type { DeliveryStore, WebhookSender } from './ports';
import { maxAttempts, retryDelayMs } from './retry-schedule';

/** The SPEC 6 payload plus `note_ref` and, on end events, `reason` (DECISIONS 11). */
export interface WebhookPayload {
  event: string;
  timestamp: string;
  data: {
    note_id: string | null;
    note_ref: string;
    reason?: string;
    access_details: { ip_address: string | null; user_agent: string; access_time: string } | null;
  };
}

/** DECISIONS 15: `request.submitted`, about a request (its reference) and the submission's note (its reference). */
export interface RequestWebhookPayload {
  event: typeof REQUEST_SUBMITTED_EVENT;
  timestamp: string;
  data: { request_ref: string; note_ref: string; submission: number; submissions_left: number };
}

interface Target {
  key: string;
  url: string;
  secret: string;
  payload: WebhookPayload | RequestWebhookPayload;
  noteWebhook: boolean;
}

export interface WebhookDispatcherOptions {
  eventOpener: MessageOpening;
  targetOpener: MessageOpening;
  subscriptions: readonly OperatorSubscription[];
  pseudonymKey: Buffer;
  sender: WebhookSender;
  store: DeliveryStore;
  hosts: HostGuard;
  retryDelaysMs: readonly number[];
  /** How long a delivery may wait for a slot of a busy host before it is deferred (default 2000 ms). */
  hostWaitMs?: number;
  /** Delay before an event deferred by a busy host is tried again, not counted as an attempt (default 1000 ms). */
  busyDeferMs?: number;
  /** Delay before an event deferred by an open circuit is tried again, not counted as an attempt. */
  circuitDeferMs: number;
  clock: Clock;
  logger: Logger;
  metrics: WebhooksMetrics;
}

const WEBHOOK_KINDS: ReadonlySet<string> = new Set([...WEBHOOK_EVENT_NAMES, REQUEST_SUBMITTED_EVENT]);
const NOTE_TARGET = 'note';
/** What one target's delivery came to: done (2xx, 410, refused), failed (counts as an attempt), deferred (does not). */
type TargetOutcome = { kind: 'done' } | { kind: 'failed'; attempt: number } | { kind: 'deferred'; delayMs: number };
/** The bus's own limit, far beyond the schedule: the dispatcher decides when an event is dead, by its recorded attempts. */
export const BUS_MAX_ATTEMPTS = 10_000;

/**
 * Turns one note event into signed deliveries (DECISIONS 11): to the note's own webhook and to
 * every operator subscription. Targets already settled for this event id (a redelivery after a
 * crash, a retry after a partial failure) are skipped, so a receiver sees an event again only
 * when we could not learn that it got it (at least once; it dedupes by `webhook-id`). Any failed
 * target makes the whole message come back after a broker-held delay; after the last attempt the
 * bus dead-letters it.
 */
export class WebhookDispatcher {
  private readonly attempts: number;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.attempts = maxAttempts(options.retryDelaysMs);
  }

  /** Delivery attempts per target (the first and one per delay); deferrals by a busy host or open circuit do not count. */
  get maxAttempts(): number {
    return this.attempts;
  }

  async handle(message: IncomingMessage): Promise<void> {
    if (!WEBHOOK_KINDS.has(message.routingKey)) return;
    const event = this.parse(message);
    if (!event) return;
    if (!event.part?.target && this.options.subscriptions.length === 0) return;
    const noteRef = event.envelope.data.note_ref ?? event.envelope.data.note_id;
    const { records, gone } = await this.options.store.stateOf(event.envelope.id, noteRef);
    const targets = this.targetsOf(event.envelope, event.part, noteRef, gone);
    const pending = targets.filter((target) => {
      const status = records.get(target.key)?.status;
      return status === undefined || status === 'failed';
    });
    const outcomes = await Promise.all(pending.map((target) => this.deliver(event.envelope, target, (records.get(target.key)?.attempts ?? 0) + 1)));
    const failed = outcomes.filter((o): o is Extract<TargetOutcome, { kind: 'failed' }> => o.kind === 'failed');
    const deferred = outcomes.filter((o): o is Extract<TargetOutcome, { kind: 'deferred' }> => o.kind === 'deferred');
    if (failed.length === 0 && deferred.length === 0) return;
    if (failed.length > 0) {
      const attempt = Math.max(...failed.map((o) => o.attempt));
      if (attempt >= this.attempts) {
        this.options.metrics.outcome('dead_letter');
        this.options.logger.warn('webhook event dead-lettered after its last attempt', { eventId: event.envelope.id, event: event.envelope.event, attempts: attempt });
        throw new PermanentMessageFailure('webhook delivery failed on its last attempt');
      }
      this.options.metrics.outcome('retry');
      throw new RetryMessageLater('webhook delivery failed', retryDelayMs(this.options.retryDelaysMs, attempt));
    }
    throw new RetryMessageLater('webhook delivery deferred', Math.min(...deferred.map((o) => o.delayMs)));
  }

  private parse(message: IncomingMessage): { envelope: NoteEvent; part: SealedWebhookPart | null } | null {
    let envelope: NoteEvent;
    try {
      envelope = JSON.parse(message.body) as NoteEvent;
    } catch {
      throw new PermanentMessageFailure('note event is not JSON');
    }
    if (typeof envelope?.id !== 'string' || typeof envelope.data?.note_id !== 'string') throw new PermanentMessageFailure('not a note event');
    if (envelope.webhook === undefined) return { envelope, part: null };
    try {
      return { envelope, part: JSON.parse(this.options.eventOpener.open(envelope.webhook)) as SealedWebhookPart };
    } catch {
      // Sealed to a key this service does not hold (or damaged): it can never be delivered.
      throw new PermanentMessageFailure('the webhook part does not open with WEBHOOK_PRIVATE_KEYS');
    }
  }

  /** `gone`: the note's webhook answered 410 to an earlier event, so only operator subscriptions remain. */
  private targetsOf(envelope: NoteEvent, part: SealedWebhookPart | null, noteRef: string, gone: boolean): Target[] {
    const base = {
      event: envelope.event,
      timestamp: envelope.timestamp,
      reason: envelope.event === 'note.destroyed' || envelope.event === 'note.expired' ? envelope.data.reason : undefined,
    };
    const targets: Target[] = [];
    if (envelope.event === (REQUEST_SUBMITTED_EVENT as string)) {
      // A request's event goes to the request's own webhook alone.
      if (!part?.target || gone) return targets;
      const target = this.openTarget(part.target);
      const data = envelope.data as unknown as Record<string, unknown>;
      targets.push({
        key: NOTE_TARGET, url: target.url, secret: target.secret, noteWebhook: true,
        payload: {
          event: REQUEST_SUBMITTED_EVENT,
          timestamp: envelope.timestamp,
          data: {
            request_ref: String(data.request_ref ?? noteRef),
            note_ref: String(data.note_ref ?? ''),
            submission: Number(data.submission),
            submissions_left: Number(data.submissions_left),
          },
        },
      });
      return targets;
    }
    if (part?.target && !gone) {
      let target: WebhookTarget;
      try {
        target = JSON.parse(this.options.targetOpener.open(part.target)) as WebhookTarget;
      } catch {
        throw new PermanentMessageFailure('the webhook target does not open with WEBHOOK_PRIVATE_KEYS');
      }
      targets.push({
        key: NOTE_TARGET,
        url: target.url,
        secret: target.secret,
        noteWebhook: true,
        payload: payloadOf(base, { note_id: part.note_id, note_ref: noteRef, access_details: part.access_details }),
      });
    }
    if (this.options.subscriptions.length > 0) {
      const pseudonym = createHmac('sha256', this.options.pseudonymKey).update(noteRef).digest('hex').slice(0, 32);
      for (const subscription of this.options.subscriptions) {
        const access = part?.access_details ?? null;
        targets.push({
          key: subscription.id,
          url: subscription.url,
          secret: subscription.secret,
          noteWebhook: false,
          payload: payloadOf(base, {
            note_id: pseudonym,
            note_ref: pseudonym,
            access_details: access && { ...access, ip_address: subscription.includeIpAddress ? access.ip_address : null },
          }),
        });
      }
    }
    return targets;
  }

  private openTarget(sealed: string): WebhookTarget {
    try {
      return JSON.parse(this.options.targetOpener.open(sealed)) as WebhookTarget;
    } catch {
      throw new PermanentMessageFailure('the webhook target does not open with WEBHOOK_PRIVATE_KEYS');
    }
  }

  /** One target's delivery; `attempt` is its delivery attempt number (recorded attempts + 1). */
  private async deliver(envelope: NoteEvent, target: Target, attempt: number): Promise<TargetOutcome> {
    const { store, hosts, metrics, clock, logger } = this.options;
    const host = new URL(target.url).host;
    const admission = await hosts.acquire(host, this.options.hostWaitMs ?? 2_000);
    if (!admission.admitted) {
      metrics.attempt(admission.reason);
      return { kind: 'deferred', delayMs: admission.reason === 'circuit_open' ? this.options.circuitDeferMs : this.options.busyDeferMs ?? 1_000 };
    }
    const body = JSON.stringify(target.payload);
    const sentAt = clock.now();
    const headers = {
      'webhook-id': envelope.id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Webhook(target.secret).sign(envelope.id, sentAt, body),
    };
    let status: number | null = null;
    try {
      const result = await this.options.sender.send({ url: target.url, headers, body });
      status = result.status;
      metrics.latency(result.durationMs / 1000);
    } catch (err) {
      if ((err as Error).name === 'RefusedTargetError') {
        // DECISIONS 11: refused again at delivery; never connected to, never retried.
        admission.release(true);
        metrics.attempt('refused');
        metrics.outcome('refused');
        logger.warn('webhook target refused at delivery', { eventId: envelope.id, target: target.noteWebhook ? 'note' : 'operator', reason: (err as Error).message });
        await store.record(envelope.id, target.key, 'refused', attempt, null, clock.now());
        return { kind: 'done' };
      }
      admission.release(false);
      metrics.attempt('error');
      logger.info('webhook delivery failed; will retry', { eventId: envelope.id, attempt, err: (err as Error).name });
      await store.record(envelope.id, target.key, 'failed', attempt, null, clock.now());
      return { kind: 'failed', attempt };
    }
    if (status >= 200 && status < 300) {
      admission.release(true);
      metrics.attempt('2xx');
      metrics.outcome('delivered');
      await store.record(envelope.id, target.key, 'delivered', attempt, status, clock.now());
      return { kind: 'done' };
    }
    if (status === 410 && target.noteWebhook) {
      admission.release(true);
      metrics.attempt('410');
      metrics.outcome('gone');
      await store.markGone(target.payload.data.note_ref, clock.now());
      await store.record(envelope.id, target.key, 'gone', attempt, status, clock.now());
      return { kind: 'done' };
    }
    admission.release(status < 500 && status !== 429);
    metrics.attempt(status >= 500 ? '5xx' : '4xx');
    await store.record(envelope.id, target.key, 'failed', attempt, status, clock.now());
    return { kind: 'failed', attempt };
  }
}

function payloadOf(base: { event: string; timestamp: string; reason?: string }, data: Omit<WebhookPayload['data'], 'reason'>): WebhookPayload {
  return {
    event: base.event,
    timestamp: base.timestamp,
    data: { note_id: data.note_id, note_ref: data.note_ref, ...(base.reason ? { reason: base.reason } : {}), access_details: data.access_details },
  };
}

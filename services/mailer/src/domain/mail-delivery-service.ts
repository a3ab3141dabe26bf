import { maskEmail, type Clock, type Logger, type MailCommand } from '@vanish/common';
import type { AddressHasher } from './address-hasher';
import type { MailKind } from './mail-command';
import { renderEmail, PRODUCT_NAME } from './mail-templates';
import { MailDeliveryError, scrubAddresses, type MailTransport } from './mail-transport';
import type { MailerStore } from './mailer-store';
import type { RetryPolicy } from './retry-policy';
import type { UnsubscribeTokens } from './unsubscribe-tokens';

/** What became of one mail command; the consumer turns it into ack, retry or dead letter. */
export type DeliveryOutcome =
  | { status: 'sent' }
  | { status: 'duplicate' }
  | { status: 'over_quota' }
  | { status: 'suppressed' }
  | { status: 'retry'; delayMs: number; reason: string }
  | { status: 'dead'; reason: string };

/** Metric hooks (the metrics adapter implements them; fakes count). */
export interface MailerObserver {
  sent(kind: MailKind): void;
  failed(kind: MailKind, type: 'temporary' | 'permanent'): void;
  deadLettered(kind: MailKind | 'unknown', reason: 'rejected' | 'retries_exhausted' | 'invalid'): void;
  quotaExceeded(kind: MailKind): void;
}

export const noopObserver: MailerObserver = { sent() {}, failed() {}, deadLettered() {}, quotaExceeded() {} };

export interface MailDeliveryServiceDeps {
  store: MailerStore;
  transport: MailTransport;
  hasher: AddressHasher;
  tokens: UnsubscribeTokens;
  retryPolicy: RetryPolicy;
  clock: Clock;
  logger: Logger;
  observer?: MailerObserver;
  mailFrom: string;
  publicBaseUrl: string;
  quotaPerHour: number;
  quotaPerDay: number;
  /** See BeginDeliveryInput.attemptLeaseMs. */
  attemptLeaseMs: number;
  /**
   * The SMTP server's availability (common's DependencyState for `smtp`): a send that fails because
   * the server cannot be reached is part of its outage, told once in the log rather than per e-mail;
   * a send it takes ends the outage.
   */
  smtpOutage?: SmtpOutage;
  /**
   * Told of a store failure that is logged rather than thrown (a hold that could not be renewed): true
   * when it was reported as part of a dependency's outage (the database is down), logged once for all.
   */
  reportedAsOutage?: (err: unknown, fields: Record<string, unknown>) => boolean;
}

/** What the delivery service tells of the SMTP server's availability (common's DependencyState has this shape). */
export interface SmtpOutage {
  failed(detail: { commandId: string; err: string; attempt: number; delayMs: number }): void;
  answered(): void;
}

/**
 * A temporary failure that says the server is not there (no connection, no greeting, a timeout, or
 * 421 "service not available, closing"), as opposed to a server that answered with a refusal of its own.
 */
export function isSmtpUnreachable(failure: MailDeliveryError): boolean {
  const code = failure.options.responseCode;
  return failure.kind === 'temporary' && (code === undefined || code === 421) && !/^(EAUTH|ETLS)\b/.test(failure.reason);
}

/**
 * Sends one mail command at most once per command id (after the SMTP server accepted it), within
 * the recipient's quota, never to a suppressed address. The at-least-once window: if the process
 * dies after the server accepted the e-mail and before markSent committed, the redelivered command
 * is sent again; the stable Message-ID lets the receiving side drop that duplicate.
 */
export class MailDeliveryService {
  private readonly observer: MailerObserver;
  private readonly domain: string;

  constructor(private readonly deps: MailDeliveryServiceDeps) {
    this.observer = deps.observer ?? noopObserver;
    this.domain = deps.mailFrom.slice(deps.mailFrom.lastIndexOf('@') + 1) || 'localhost';
  }

  async deliver(commandId: string, command: MailCommand): Promise<DeliveryOutcome> {
    const { store, clock, logger } = this.deps;
    const addressHash = this.deps.hasher.hash(command.to);
    const recipient = maskEmail(command.to);
    const begun = await store.beginDelivery({
      commandId, addressHash, kind: command.kind, now: clock.now(),
      quotaPerHour: this.deps.quotaPerHour, quotaPerDay: this.deps.quotaPerDay, attemptLeaseMs: this.deps.attemptLeaseMs,
    });
    switch (begun.decision) {
      case 'already_sent':
        logger.info('mail command already sent: not sending twice', { commandId, kind: command.kind });
        return { status: 'duplicate' };
      case 'already_dropped':
        logger.info('mail command already handled', { commandId, kind: command.kind, state: begun.state });
        return { status: 'duplicate' };
      case 'in_flight': {
        // Looked at again after a first retry's delay (one of the broker's few delay queues): by then the
        // other attempt has usually sent it (a duplicate, dropped) or failed and freed it.
        const delayMs = this.deps.retryPolicy.nextDelay(1, clock.now(), clock.now()) ?? 1;
        logger.info('mail command being sent by another delivery: looked at again later', { commandId, kind: command.kind, delayMs });
        return { status: 'retry', delayMs, reason: 'another delivery of this command is sending it' };
      }
      case 'over_quota':
        this.observer.quotaExceeded(command.kind);
        logger.warn('recipient over its e-mail quota: not sent', { commandId, kind: command.kind, recipient });
        return { status: 'over_quota' };
      case 'suppressed':
        logger.info('recipient unsubscribed or rejected earlier: not sent', { commandId, kind: command.kind, recipient });
        return { status: 'suppressed' };
      case 'send':
        break;
    }

    const unsubscribeUrl = `${this.deps.publicBaseUrl}/unsubscribe/${this.deps.tokens.issue(addressHash)}`;
    const rendered = renderEmail(command, unsubscribeUrl);
    const hold = this.keepHolding(commandId);
    try {
      await this.deps.transport.send({
        messageId: `<${commandId}@${this.domain}>`,
        from: `${PRODUCT_NAME} <${this.deps.mailFrom}>`,
        to: command.to,
        ...rendered,
        headers: {
          'List-Unsubscribe': `<${unsubscribeUrl}>`,
          'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
          'Auto-Submitted': 'auto-generated',
        },
      });
    } catch (err) {
      hold.stop();
      return this.failed(err, commandId, command, addressHash, recipient, begun);
    }
    this.deps.smtpOutage?.answered();
    // Past this point the server has the e-mail: a crash before this commit means one duplicate at most.
    // The hold is kept until the mark has committed: released before it, a redelivery of the command
    // arriving while the mark waits for the database (a slow commit, a failover) found the command
    // neither sent nor held, and sent it again.
    try {
      await store.markSent(commandId, clock.now());
    } finally {
      hold.stop();
    }
    this.observer.sent(command.kind);
    logger.info('e-mail sent', { commandId, kind: command.kind, recipient, attempt: begun.attempts });
    return { status: 'sent' };
  }

  /**
   * The lease bounds one SMTP phase, not a whole send: a send can wait for a pooled connection, and a
   * slow relay can take longer with every phase in time. While the send is pending, the hold is
   * renewed every third of the lease, so another delivery of the command keeps answering 'in_flight'.
   * Only a crashed attempt stops renewing, and its command is sent again once its last lease ran out.
   */
  private keepHolding(commandId: string): { stop(): void } {
    const { store, clock, logger, attemptLeaseMs } = this.deps;
    let warned = false;
    const timer = setInterval(() => {
      store.extendAttempt(commandId, new Date(clock.now().getTime() + attemptLeaseMs)).catch((err: Error) => {
        if (this.deps.reportedAsOutage?.(err, { task: 'renew the hold of a send', commandId })) return;
        if (warned) return;
        warned = true;
        logger.warn('could not renew the hold of a send in progress: another delivery may send it too once it runs out', { commandId, err: err.message });
      });
    }, Math.max(1, Math.floor(attemptLeaseMs / 3)));
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  private async failed(
    err: unknown, commandId: string, command: MailCommand, addressHash: string, recipient: string,
    begun: { attempts: number; firstAttemptAt: Date },
  ): Promise<DeliveryOutcome> {
    const { store, clock, logger } = this.deps;
    const failure = err instanceof MailDeliveryError
      ? err
      : new MailDeliveryError('temporary', `unexpected transport error: ${scrubAddresses(String((err as Error)?.message ?? err))}`, { cause: err });
    this.observer.failed(command.kind, failure.kind);
    const now = clock.now();
    if (failure.kind === 'permanent') {
      if (failure.recipientRejected) await store.suppress(addressHash, 'rejected', now);
      await store.markFailed(commandId, now);
      this.observer.deadLettered(command.kind, 'rejected');
      logger.warn('e-mail rejected permanently: dead-lettered', {
        commandId, kind: command.kind, recipient, reason: failure.reason, suppressed: failure.recipientRejected,
      });
      return { status: 'dead', reason: `rejected: ${failure.reason}` };
    }
    const delayMs = this.deps.retryPolicy.nextDelay(begun.attempts, begun.firstAttemptAt, now);
    if (delayMs === undefined) {
      await store.markFailed(commandId, now);
      this.observer.deadLettered(command.kind, 'retries_exhausted');
      logger.warn('e-mail not delivered within the retry horizon: dead-lettered', {
        commandId, kind: command.kind, recipient, attempts: begun.attempts, reason: failure.reason,
      });
      return { status: 'dead', reason: `retries exhausted after ${begun.attempts} attempts: ${failure.reason}` };
    }
    // The retry may send at once; a store that cannot be told answers 'in_flight' until the lease ends.
    await store.endAttempt(commandId);
    const fields = { commandId, kind: command.kind, recipient, attempt: begun.attempts, delayMs, reason: failure.reason };
    if (this.deps.smtpOutage && isSmtpUnreachable(failure)) {
      // Part of the server's outage: one line when it goes, summaries, one when it is back; this one at debug.
      this.deps.smtpOutage.failed({ commandId, err: failure.reason, attempt: begun.attempts, delayMs });
      logger.debug('e-mail not delivered yet: will retry', fields);
    } else {
      logger.warn('e-mail not delivered yet: will retry', fields);
    }
    return { status: 'retry', delayMs, reason: failure.reason };
  }
}

import {
  PermanentMessageFailure, RetryMessageLater,
  type IncomingMessage, type Logger, type MessageConsumer, type MessageOpening, type Subscription,
} from '@vanish/common';
import { InvalidMailCommand, parseEnvelope, parseMailCommand } from '../domain/mail-command';
import type { MailDeliveryService, MailerObserver } from '../domain/mail-delivery-service';

export const MAIL_ROUTING_KEY = 'mail.send';

export interface MailCommandConsumerOptions {
  consumer: MessageConsumer;
  /** MailCommandOpener: MAIL_PRIVATE_KEYS, and MAIL_KEYS while legacy commands may be queued. */
  opener: MessageOpening;
  service: MailDeliveryService;
  observer: MailerObserver;
  logger: Logger;
  queue: string;
  prefetch: number;
  /** Delay before retrying when our own database is unavailable. */
  storeRetryDelayMs: number;
  /**
   * Told of a command that could not be handled first: true when it was reported as part of a
   * dependency's outage (the database is down), which logs it once for all, not once per command.
   */
  reportedAsOutage?: (err: unknown, fields: Record<string, unknown>) => boolean;
}

/**
 * Entry point for `mail.send`: opens the sealed command, hands it to the delivery service, and
 * turns the outcome into the bus's vocabulary. A message is acked only after the handler resolved,
 * i.e. after the SMTP server accepted the e-mail (or it was dropped on purpose).
 */
export class MailCommandConsumer {
  private subscription: Subscription | undefined;

  constructor(private readonly options: MailCommandConsumerOptions) {}

  async start(): Promise<void> {
    this.subscription = await this.options.consumer.consume({
      queue: this.options.queue,
      bindings: [MAIL_ROUTING_KEY],
      prefetch: this.options.prefetch,
      // The delivery service bounds retries by its horizon; this only stops a runaway loop.
      maxAttempts: 10_000,
    }, (message) => this.handle(message));
  }

  async stop(): Promise<void> {
    await this.subscription?.cancel();
    this.subscription = undefined;
  }

  async handle(message: IncomingMessage): Promise<void> {
    const { logger, observer } = this.options;
    let envelopeId: string;
    let command;
    try {
      const envelope = parseEnvelope(message.body);
      envelopeId = envelope.id;
      let opened: string;
      try {
        opened = this.options.opener.open(envelope.sealed);
      } catch {
        throw new InvalidMailCommand('sealed command does not open with MAIL_PRIVATE_KEYS (or the legacy MAIL_KEYS)');
      }
      command = parseMailCommand(opened);
    } catch (err) {
      const reason = err instanceof InvalidMailCommand ? err.message : 'unreadable mail command';
      observer.deadLettered('unknown', 'invalid');
      logger.error('invalid mail command: dead-lettered', { messageId: message.id, reason });
      throw new PermanentMessageFailure(`invalid mail command: ${reason}`);
    }

    let outcome;
    try {
      outcome = await this.options.service.deliver(envelopeId, command);
    } catch (err) {
      if (!this.options.reportedAsOutage?.(err, { commandId: envelopeId, attempt: message.attempt })) {
        logger.warn('mail command not handled (mailer database unavailable?): will retry', {
          commandId: envelopeId, attempt: message.attempt, err: (err as Error).message,
        });
      }
      throw new RetryMessageLater('mailer store unavailable', this.options.storeRetryDelayMs, { cause: err });
    }
    switch (outcome.status) {
      case 'retry':
        throw new RetryMessageLater(outcome.reason, outcome.delayMs);
      case 'dead':
        throw new PermanentMessageFailure(outcome.reason);
      default:
        return;
    }
  }
}

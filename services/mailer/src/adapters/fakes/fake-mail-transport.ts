import { MailDeliveryError, type MailTransport, type OutgoingEmail } from '../../domain/mail-transport';

/** Records what it was given; `failWith` queues failures for the next sends (one per send). */
export class FakeMailTransport implements MailTransport {
  readonly kind = 'smtp' as const;
  readonly sent: OutgoingEmail[] = [];
  readonly failures: MailDeliveryError[] = [];
  healthy = true;

  failWith(...errors: MailDeliveryError[]): this {
    this.failures.push(...errors);
    return this;
  }

  async send(email: OutgoingEmail): Promise<void> {
    const failure = this.failures.shift();
    if (failure) throw failure;
    this.sent.push(email);
  }

  async verify(): Promise<boolean> {
    return this.healthy;
  }

  async close(): Promise<void> {}
}

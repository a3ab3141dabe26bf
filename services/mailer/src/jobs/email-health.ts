import type { MailTransport } from '../domain/mail-transport';

export type EmailHealth = 'configured' | 'not_configured' | 'unhealthy';

/**
 * The `email` component of the mailer's heartbeat. A probe answers at once with what the last
 * verification found and starts the next one in the background, so a stalled SMTP server can never
 * delay a heartbeat (silence would read as "mailer down" rather than "e-mail unhealthy").
 */
export class EmailHealthProbe {
  private last: EmailHealth;
  private checking: Promise<void> | undefined;

  constructor(private readonly transport: MailTransport) {
    this.last = transport.kind === 'file' ? 'not_configured' : 'configured';
  }

  async probe(): Promise<EmailHealth> {
    if (this.transport.kind === 'file') return 'not_configured';
    this.checking ??= this.transport.verify()
      .then((ok) => { this.last = ok ? 'configured' : 'unhealthy'; })
      .catch(() => { this.last = 'unhealthy'; })
      .finally(() => { this.checking = undefined; });
    return this.last;
  }

  /** Waits for a verification in flight (tests and shutdown). */
  async settled(): Promise<void> {
    await this.checking;
  }
}

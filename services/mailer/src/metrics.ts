import { Counter, type Registry } from '@vanish/common';
import type { MailerObserver } from './domain/mail-delivery-service';

/** mailer_* counters on the injected registry; labels are fixed words, never addresses or ids. */
export function createMailerMetrics(registry: Registry): MailerObserver {
  const sent = new Counter({ name: 'mailer_emails_sent_total', help: 'E-mails accepted by the SMTP server (or written as files)', labelNames: ['kind'] as const, registers: [registry] });
  const failed = new Counter({ name: 'mailer_emails_failed_total', help: 'Failed attempts to hand an e-mail over, by type (temporary or permanent)', labelNames: ['kind', 'type'] as const, registers: [registry] });
  const dead = new Counter({ name: 'mailer_emails_dead_lettered_total', help: 'Mail commands sent to the dead-letter queue, by reason', labelNames: ['kind', 'reason'] as const, registers: [registry] });
  const quota = new Counter({ name: 'mailer_quota_exceeded_total', help: 'E-mails not sent because the recipient was over its hourly or daily quota', labelNames: ['kind'] as const, registers: [registry] });
  return {
    sent: (kind) => sent.inc({ kind }),
    failed: (kind, type) => failed.inc({ kind, type }),
    deadLettered: (kind, reason) => dead.inc({ kind, reason }),
    quotaExceeded: (kind) => quota.inc({ kind }),
  };
}

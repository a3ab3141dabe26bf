import type { MailKind } from './mail-command';

export type DeliveryState = 'reserved' | 'sent' | 'over_quota' | 'suppressed' | 'failed';

export interface BeginDeliveryInput {
  commandId: string;
  addressHash: string;
  kind: MailKind;
  now: Date;
  quotaPerHour: number;
  quotaPerDay: number;
}

export type BeginDeliveryResult =
  /** Send now; `attempts` counts this try; quota was counted once, at the first attempt. */
  | { decision: 'send'; attempts: number; firstAttemptAt: Date }
  /** A redelivered command whose e-mail the SMTP server already accepted. */
  | { decision: 'already_sent' }
  /** A redelivered command that was already dropped (quota, suppression, failure). */
  | { decision: 'already_dropped'; state: DeliveryState }
  | { decision: 'over_quota' }
  | { decision: 'suppressed' };

/**
 * Port: the mailer's own records, shared by every replica. Keyed by command id (idempotency) and by
 * a keyed hash of the address (quota, suppression): never the address itself.
 */
export interface MailerStore {
  /**
   * Atomically (per address, across replicas): look up the command; if new, check suppression
   * and the hour/day quota of the address for this kind of e-mail (each kind counts apart, so link
   * e-mails to an address never use up its read notifications) and reserve one e-mail of it.
   */
  beginDelivery(input: BeginDeliveryInput): Promise<BeginDeliveryResult>;
  /** Recorded right after the SMTP server accepted the e-mail. */
  markSent(commandId: string, at: Date): Promise<void>;
  markFailed(commandId: string, at: Date): Promise<void>;
  suppress(addressHash: string, reason: 'unsubscribed' | 'rejected', at: Date): Promise<void>;
  isSuppressed(addressHash: string): Promise<boolean>;
  /** Forgets delivery records older than the date (idempotency only matters while redeliveries can happen). */
  purgeDeliveries(olderThan: Date): Promise<number>;
  ping(): Promise<boolean>;
}

import type { MailKind } from './mail-command';

export type DeliveryState = 'reserved' | 'sent' | 'over_quota' | 'suppressed' | 'failed';

export interface BeginDeliveryInput {
  commandId: string;
  addressHash: string;
  kind: MailKind;
  now: Date;
  quotaPerHour: number;
  quotaPerDay: number;
  /**
   * How long a 'send' holds the command: another delivery of it meanwhile (a publish repeated after a
   * broker cut, a redelivery while the first handler still sends) gets 'in_flight' instead of a second
   * e-mail. Longer than an SMTP send can take; a crashed attempt's command is sent again after it.
   */
  attemptLeaseMs: number;
}

export type BeginDeliveryResult =
  /** Send now; `attempts` counts this try; quota was counted once, at the first attempt. */
  | { decision: 'send'; attempts: number; firstAttemptAt: Date }
  /** A redelivered command whose e-mail the SMTP server already accepted. */
  | { decision: 'already_sent' }
  /** A redelivered command that was already dropped (quota, suppression, failure). */
  | { decision: 'already_dropped'; state: DeliveryState }
  | { decision: 'over_quota' }
  | { decision: 'suppressed' }
  /** Another delivery of this command is sending it now (its lease has not run out): look again later. */
  | { decision: 'in_flight' };

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
  /** Ends an attempt that will be retried (a temporary failure): its next delivery may send at once. */
  endAttempt(commandId: string): Promise<void>;
  /**
   * Keeps holding a command whose attempt is still sending (a slow relay, a wait for a pooled SMTP
   * connection): its hold now ends at `until`. Nothing changes for a command no longer reserved.
   */
  extendAttempt(commandId: string, until: Date): Promise<void>;
  suppress(addressHash: string, reason: 'unsubscribed' | 'rejected', at: Date): Promise<void>;
  isSuppressed(addressHash: string): Promise<boolean>;
  /** Forgets delivery records older than the date (idempotency only matters while redeliveries can happen). */
  purgeDeliveries(olderThan: Date): Promise<number>;
  ping(): Promise<boolean>;
}

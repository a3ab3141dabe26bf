import type { MailKind } from '../../domain/mail-command';
import type { BeginDeliveryInput, BeginDeliveryResult, DeliveryState, MailerStore } from '../../domain/mailer-store';

interface Delivery {
  addressHash: string;
  kind: MailKind;
  state: DeliveryState;
  counted: boolean;
  attempts: number;
  createdAt: number;
  attemptUntil: number;
}

const HOUR = 3_600_000;

/** In-memory MailerStore with the same semantics as the knex one (the contract suite runs on both). */
export class FakeMailerStore implements MailerStore {
  readonly deliveries = new Map<string, Delivery>();
  readonly suppressed = new Map<string, string>();
  available = true;

  async beginDelivery(input: BeginDeliveryInput): Promise<BeginDeliveryResult> {
    this.check();
    const now = input.now.getTime();
    const existing = this.deliveries.get(input.commandId);
    if (existing) {
      if (existing.state === 'sent') return { decision: 'already_sent' };
      if (existing.state !== 'reserved') return { decision: 'already_dropped', state: existing.state };
      if (existing.attemptUntil > now) return { decision: 'in_flight' };
      if (this.suppressed.has(input.addressHash)) {
        existing.state = 'suppressed';
        return { decision: 'suppressed' };
      }
      existing.attempts += 1;
      existing.attemptUntil = now + input.attemptLeaseMs;
      return { decision: 'send', attempts: existing.attempts, firstAttemptAt: new Date(existing.createdAt) };
    }
    const record = (state: DeliveryState, counted: boolean) =>
      this.deliveries.set(input.commandId, {
        addressHash: input.addressHash, kind: input.kind, state, counted, attempts: 1, createdAt: now,
        attemptUntil: state === 'reserved' ? now + input.attemptLeaseMs : 0,
      });
    if (this.suppressed.has(input.addressHash)) {
      record('suppressed', false);
      return { decision: 'suppressed' };
    }
    const counted = [...this.deliveries.values()].filter((d) => d.addressHash === input.addressHash && d.kind === input.kind && d.counted);
    const lastHour = counted.filter((d) => d.createdAt > now - HOUR).length;
    const lastDay = counted.filter((d) => d.createdAt > now - 24 * HOUR).length;
    if (lastHour >= input.quotaPerHour || lastDay >= input.quotaPerDay) {
      record('over_quota', false);
      return { decision: 'over_quota' };
    }
    record('reserved', true);
    return { decision: 'send', attempts: 1, firstAttemptAt: input.now };
  }

  async markSent(commandId: string): Promise<void> {
    this.check();
    const d = this.deliveries.get(commandId);
    if (d) d.state = 'sent';
  }

  async markFailed(commandId: string): Promise<void> {
    this.check();
    const d = this.deliveries.get(commandId);
    if (d) d.state = 'failed';
  }

  async endAttempt(commandId: string): Promise<void> {
    this.check();
    const d = this.deliveries.get(commandId);
    if (d?.state === 'reserved') d.attemptUntil = 0;
  }

  async extendAttempt(commandId: string, until: Date): Promise<void> {
    this.check();
    const d = this.deliveries.get(commandId);
    if (d?.state === 'reserved') d.attemptUntil = until.getTime();
  }

  async suppress(addressHash: string, reason: 'unsubscribed' | 'rejected'): Promise<void> {
    this.check();
    if (!this.suppressed.has(addressHash)) this.suppressed.set(addressHash, reason);
  }

  async isSuppressed(addressHash: string): Promise<boolean> {
    this.check();
    return this.suppressed.has(addressHash);
  }

  async purgeDeliveries(olderThan: Date): Promise<number> {
    this.check();
    let removed = 0;
    for (const [id, d] of this.deliveries) {
      if (d.createdAt < olderThan.getTime()) {
        this.deliveries.delete(id);
        removed += 1;
      }
    }
    return removed;
  }

  async ping(): Promise<boolean> {
    return this.available;
  }

  private check(): void {
    if (!this.available) throw new Error('fake store unavailable');
  }
}

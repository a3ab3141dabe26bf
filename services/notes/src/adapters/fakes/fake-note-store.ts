import { DependencyUnavailableError, type OutboxRow, type OutboxStore, type OutgoingMessage } from '@vanish/common';
import type { DueRelease, ExpiredNote, NoteRecord, NoteState, NoteStore, NoteTransaction, ReceiptEntry } from '../../domain/ports';

/**
 * In-memory NoteStore and OutboxStore for unit tests. Transactions run one at a time on a copy of
 * the data that replaces the original only when the work resolves, so a throw leaves no trace,
 * exactly like the database. `failNextTransaction` lets a test simulate a database fault.
 */
export class FakeNoteStore implements NoteStore, OutboxStore {
  notes = new Map<string, NoteRecord>();
  outbox: OutboxRow[] = [];
  /** Receipt timelines (DECISIONS 12) of notes created with a receipt, by note_ref. */
  receipts = new Map<string, ReceiptEntry[]>();
  available = true;
  private nextSeq = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private failNext: Error | undefined;

  failNextTransaction(error: Error): void {
    this.failNext = error;
  }

  async findActive(lookup: string, now: Date): Promise<NoteRecord | null> {
    this.assertAvailable();
    const note = this.notes.get(lookup);
    return note && note.expiresAt.getTime() > now.getTime() ? { ...note } : null;
  }

  async findExpired(now: Date, limit: number): Promise<ExpiredNote[]> {
    this.assertAvailable();
    return [...this.notes.values()]
      .filter((note) => note.expiresAt.getTime() <= now.getTime())
      .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
      .slice(0, limit)
      .map((note) => ({ lookup: note.lookup, expiryType: note.expiryType }));
  }

  async findDueReleases(now: Date, limit: number): Promise<DueRelease[]> {
    this.assertAvailable();
    return [...this.notes.values()]
      .filter((note) => note.expiresAt.getTime() > now.getTime() && isDue(note, now) && !note.controls?.releasedAt)
      .slice(0, limit)
      .map((note) => ({ lookup: note.lookup }));
  }

  insertNew(note: NoteRecord, messages: readonly OutgoingMessage[]): Promise<void> {
    return this.transaction(async (tx) => {
      await tx.insert(note);
      await tx.enqueue(messages);
    });
  }

  async reserveAttempt(lookup: string, now: Date, limit: number, until: Date): Promise<boolean> {
    this.assertAvailable();
    const note = this.notes.get(lookup);
    if (!note || note.expiresAt.getTime() <= now.getTime() || !isReleased(note, now) || note.failedAttempts + note.attemptsInFlight >= limit) return false;
    note.attemptsInFlight += 1;
    note.attemptsReservedUntil = until;
    return true;
  }

  transaction<T>(work: (tx: NoteTransaction) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => this.runTransaction(work));
    this.queue = run.catch(() => undefined);
    return run;
  }

  async ping(): Promise<boolean> {
    return this.available;
  }

  async claim(limit: number): Promise<OutboxRow[]> {
    this.assertAvailable();
    return this.outbox.slice(0, limit).map((row) => ({ ...row }));
  }

  /** No leases here: one relay per fake. */
  async renewLease(seqs: readonly number[]): Promise<number> {
    this.assertAvailable();
    return seqs.length;
  }

  async releaseLease(): Promise<void> {
    this.assertAvailable();
  }

  async markPublished(seqs: readonly number[]): Promise<void> {
    this.assertAvailable();
    const done = new Set(seqs);
    this.outbox = this.outbox.filter((row) => !done.has(row.seq));
  }

  async backlog(): Promise<{ count: number; oldestAgeSeconds: number }> {
    return { count: this.outbox.length, oldestAgeSeconds: 0 };
  }

  /** Outbox rows as parsed envelopes, for assertions. */
  events(): Array<{ routingKey: string; body: Record<string, unknown> }> {
    return this.outbox.map((row) => ({ routingKey: row.routingKey, body: JSON.parse(row.body) as Record<string, unknown> }));
  }

  private async runTransaction<T>(work: (tx: NoteTransaction) => Promise<T>): Promise<T> {
    this.assertAvailable();
    const notes = new Map([...this.notes].map(([key, note]) => [key, { ...note }]));
    const outbox = [...this.outbox];
    const receipts = new Map([...this.receipts].map(([ref, entries]) => [ref, [...entries]]));
    let nextSeq = this.nextSeq;
    const active = (lookup: string, now: Date) => {
      const note = notes.get(lookup);
      return note && note.expiresAt.getTime() > now.getTime() ? note : undefined;
    };
    const tx: NoteTransaction = {
      insert: async (note) => {
        if (notes.has(note.lookup)) throw new Error('duplicate lookup');
        notes.set(note.lookup, { ...note });
        if (note.receiptKey !== undefined) receipts.set(note.noteRef, []);
      },
      claimView: async (lookup, now) => {
        const note = active(lookup, now);
        if (!note || !isReleased(note, now) || note.currentViews >= note.maxViews) return false;
        const shrink = note.controls?.shrinkMinutes;
        if (note.currentViews === 0 && shrink) {
          note.controls = { ...note.controls!, shrunkAt: now };
          note.expiresAt = new Date(Math.min(note.expiresAt.getTime(), now.getTime() + shrink * 60_000));
        }
        note.currentViews += 1;
        return true;
      },
      markReleased: async (lookup, now) => {
        const note = notes.get(lookup);
        if (!note?.controls || !isDue(note, now) || note.controls.releasedAt) return false;
        note.controls = { ...note.controls, releasedAt: now };
        return true;
      },
      checkIn: async (lookup, now, next) => {
        const note = active(lookup, now);
        if (!note?.controls?.silenceHours || !note.controls.releaseAt || note.controls.releaseAt.getTime() <= now.getTime()) return false;
        note.controls = { ...note.controls, releaseAt: next };
        return true;
      },
      countFailedAttempt: async (lookup, now) => {
        const note = active(lookup, now);
        if (!note || !isReleased(note, now)) return false;
        note.failedAttempts += 1;
        note.attemptsInFlight = Math.max(0, note.attemptsInFlight - 1);
        return true;
      },
      refundAttempt: async (lookup) => {
        const note = notes.get(lookup);
        if (note) note.attemptsInFlight = Math.max(0, note.attemptsInFlight - 1);
      },
      countAbandonedAttempts: async (lookup, count) => {
        const note = notes.get(lookup);
        if (!note || note.attemptsInFlight < count) return;
        note.failedAttempts += count;
        note.attemptsInFlight -= count;
      },
      lock: async (lookup): Promise<NoteState | null> => {
        const note = notes.get(lookup);
        if (!note) return null;
        const { noteRef, expiryType, maxViews, currentViews, failedAttempts, attemptsInFlight, attemptsReservedUntil, expiresAt, webhookBox, controls } = note;
        return {
          noteRef, expiryType, maxViews, currentViews, failedAttempts, attemptsInFlight, attemptsReservedUntil, expiresAt, webhookBox: webhookBox ?? null,
          ...(controls ? { controls: { ...controls } } : {}),
        };
      },
      delete: async (lookup) => notes.delete(lookup),
      enqueue: async (messages: readonly OutgoingMessage[]) => {
        for (const message of messages) outbox.push({ seq: nextSeq++, ...message });
      },
      recordReceipt: async (entries) => {
        for (const entry of entries) receipts.get(entry.noteRef)?.push(entry);
      },
    };
    const result = await work(tx);
    if (this.failNext) {
      const error = this.failNext;
      this.failNext = undefined;
      throw error;
    }
    this.notes = notes;
    this.outbox = outbox;
    this.receipts = receipts;
    this.nextSeq = nextSeq;
    return result;
  }

  private assertAvailable(): void {
    if (!this.available) throw new DependencyUnavailableError('database', 'Database unavailable');
  }
}

/** DECISIONS 16: no gate, or its time has come. */
function isReleased(note: NoteRecord, now: Date): boolean {
  const at = note.controls?.releaseAt;
  return !at || at.getTime() <= now.getTime();
}

function isDue(note: NoteRecord, now: Date): boolean {
  const at = note.controls?.releaseAt;
  return Boolean(at && at.getTime() <= now.getTime());
}

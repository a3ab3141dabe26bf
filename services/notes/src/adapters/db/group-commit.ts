import { AppError } from '@vanish/common';

export interface GroupCommitLimits<T> {
  /** Most items in one transaction. */
  maxItems: number;
  /** Most bytes (as sizeOf counts them) in one transaction; a single larger item still goes alone. */
  maxBytes: number;
  sizeOf(item: T): number;
}

interface Waiting<T> {
  item: T;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Group commit for inserts that arrive concurrently: while one transaction is committing, new
 * items wait, and the next transaction takes all of them (up to the limits). One item alone is
 * committed at once, so a quiet service adds no delay; under load, fifty creates cost a few
 * transactions instead of fifty (statements, round trips and log flushes shared).
 *
 * Each item's promise settles only when its own transaction has committed or failed. When a
 * batch fails because the database refused something (a constraint, a value too large), every
 * item is tried again in a transaction of its own, so one bad item fails alone. When the database
 * is unreachable or did not answer in time (a 503 AppError), the whole batch fails at once: a
 * retry would only wait again, and a transaction that timed out may still have committed.
 */
export class GroupCommit<T> {
  private readonly waiting: Waiting<T>[] = [];
  private committing = false;

  constructor(
    private readonly commit: (items: readonly T[]) => Promise<void>,
    private readonly limits: GroupCommitLimits<T>,
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (!this.committing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.committing = true;
    try {
      while (this.waiting.length > 0) await this.commitBatch(this.nextBatch());
    } finally {
      this.committing = false;
    }
  }

  private nextBatch(): Waiting<T>[] {
    let bytes = 0;
    let count = 0;
    for (const entry of this.waiting) {
      const size = this.limits.sizeOf(entry.item);
      if (count > 0 && (count >= this.limits.maxItems || bytes + size > this.limits.maxBytes)) break;
      bytes += size;
      count += 1;
    }
    return this.waiting.splice(0, count);
  }

  private async commitBatch(batch: Waiting<T>[]): Promise<void> {
    try {
      await this.commit(batch.map((entry) => entry.item));
      for (const entry of batch) entry.resolve();
      return;
    } catch (err) {
      if (batch.length === 1 || isUnavailable(err)) {
        for (const entry of batch) entry.reject(err);
        return;
      }
    }
    for (const entry of batch) {
      try {
        await this.commit([entry.item]);
        entry.resolve();
      } catch (err) {
        entry.reject(err);
      }
    }
  }
}

function isUnavailable(err: unknown): boolean {
  return err instanceof AppError && err.statusCode === 503;
}

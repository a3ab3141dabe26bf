export interface GroupCommitOptions<T> {
  /** Most items in one transaction. */
  maxItems: number;
  /** Most bytes (as sizeOf counts them) in one transaction; a single larger item still goes alone. Default: no bound. */
  maxBytes?: number;
  sizeOf?(item: T): number;
  /**
   * When a batch of several items fails with an error for which this answers true, each item is
   * committed again in a transaction of its own, so that one bad item fails alone. Default: never
   * (the whole batch fails with the error).
   */
  retryEachAlone?(err: unknown): boolean;
  /**
   * Wait up to this long after the oldest waiting item arrived for more to come, unless maxItems are
   * already waiting. For consumers whose callers can wait (counting events, relaying the outbox):
   * under a steady stream a batch then holds what arrives in that time, not what arrived during
   * one transaction, so fewer transactions carry the same items. Default 0: a lone item goes at once.
   */
  lingerMs?: number;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
  arrivedAt: number;
}

/**
 * Group commit for writes that arrive concurrently: while one transaction is committing, new
 * items wait, and the next transaction takes all of them (up to the limits). One item alone is
 * committed at once, so a quiet service adds no delay; under load, fifty writes cost a few
 * transactions instead of fifty (statements, round trips and log flushes shared). Transactions
 * run one at a time. Reads batch the same way (one query answers every caller that asked while
 * the previous one ran), and no caller gets an answer that started before it asked.
 *
 * `commit` gets the batch and may answer one result per item, in order; each item's promise
 * settles only when its own transaction has committed (with its result) or failed.
 */
export class GroupCommit<T, R = void> {
  private readonly waiting: Waiting<T, R>[] = [];
  private committing = false;
  /** Ends a linger early, once maxItems are waiting. */
  private lingerDone: (() => void) | undefined;

  constructor(
    private readonly commit: (items: readonly T[]) => Promise<readonly R[] | void>,
    private readonly options: GroupCommitOptions<T>,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject, arrivedAt: this.options.lingerMs ? Date.now() : 0 });
      if (this.lingerDone && this.waiting.length >= this.options.maxItems) this.lingerDone();
      if (!this.committing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.committing = true;
    try {
      while (this.waiting.length > 0) {
        const lingerLeft = this.lingerLeft();
        if (lingerLeft > 0) await this.linger(lingerLeft);
        await this.commitBatch(this.nextBatch());
      }
    } finally {
      this.committing = false;
    }
  }

  /** How much longer the next batch should wait for more items: 0 to go now. */
  private lingerLeft(): number {
    const lingerMs = this.options.lingerMs ?? 0;
    if (lingerMs <= 0 || this.waiting.length >= this.options.maxItems) return 0;
    return Math.max(0, this.waiting[0].arrivedAt + lingerMs - Date.now());
  }

  private async linger(remaining: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, remaining);
      this.lingerDone = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.lingerDone = undefined;
  }

  private nextBatch(): Waiting<T, R>[] {
    const { maxItems, maxBytes = Infinity, sizeOf = () => 0 } = this.options;
    let bytes = 0;
    let count = 0;
    for (const entry of this.waiting) {
      const size = sizeOf(entry.item);
      if (count > 0 && (count >= maxItems || bytes + size > maxBytes)) break;
      bytes += size;
      count += 1;
    }
    return this.waiting.splice(0, count);
  }

  private async commitBatch(batch: Waiting<T, R>[]): Promise<void> {
    try {
      const results = await this.commit(batch.map((entry) => entry.item));
      batch.forEach((entry, index) => entry.resolve(results?.[index] as R));
      return;
    } catch (err) {
      if (batch.length === 1 || !this.options.retryEachAlone?.(err)) {
        for (const entry of batch) entry.reject(err);
        return;
      }
    }
    for (const entry of batch) {
      try {
        const results = await this.commit([entry.item]);
        entry.resolve(results?.[0] as R);
      } catch (err) {
        entry.reject(err);
      }
    }
  }
}

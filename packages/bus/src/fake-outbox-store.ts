import type { OutboxRow, OutboxStore } from '@vanish/common';

/** In-memory OutboxStore with leases, for relay tests (and for anyone needing a fake). */
export class FakeOutboxStore implements OutboxStore {
  private readonly rows = new Map<number, OutboxRow & { leasedUntil: number }>();
  private nextSeq = 1;
  failNextClaim: Error | undefined;
  failNextMark: Error | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  add(routingKey: string, body: string, id = `evt-${this.nextSeq}`): OutboxRow {
    const row = { seq: this.nextSeq, id, routingKey, body, leasedUntil: 0 };
    this.nextSeq += 1;
    this.rows.set(row.seq, row);
    return { seq: row.seq, id, routingKey, body };
  }

  get waiting(): number {
    return this.rows.size;
  }

  async claim(limit: number, leaseMs: number): Promise<OutboxRow[]> {
    if (this.failNextClaim) {
      const err = this.failNextClaim;
      this.failNextClaim = undefined;
      throw err;
    }
    const now = this.now();
    const free = [...this.rows.values()].filter((r) => r.leasedUntil <= now).sort((a, b) => a.seq - b.seq).slice(0, limit);
    for (const row of free) row.leasedUntil = now + leaseMs;
    return free.map(({ seq, id, routingKey, body }) => ({ seq, id, routingKey, body }));
  }

  async renewLease(seqs: readonly number[], leaseMs: number): Promise<number> {
    const now = this.now();
    const live = seqs.map((seq) => this.rows.get(seq)).filter((row) => row !== undefined && row.leasedUntil > now);
    for (const row of live) row!.leasedUntil = now + leaseMs;
    return live.length;
  }

  async releaseLease(seqs: readonly number[]): Promise<void> {
    for (const seq of seqs) {
      const row = this.rows.get(seq);
      if (row) row.leasedUntil = 0;
    }
  }

  /** When the lease of a waiting row ends (0: not claimed), for tests. */
  leasedUntil(seq: number): number | undefined {
    return this.rows.get(seq)?.leasedUntil;
  }

  async markPublished(seqs: readonly number[]): Promise<void> {
    if (this.failNextMark) {
      const err = this.failNextMark;
      this.failNextMark = undefined;
      throw err;
    }
    for (const seq of seqs) this.rows.delete(seq);
  }

  async backlog(): Promise<{ count: number; oldestAgeSeconds: number }> {
    return { count: this.rows.size, oldestAgeSeconds: 0 };
  }
}

import type { CounterDelta, Counters, CurrentState, HeartbeatRecord, PruneLimits, StatsStore } from '../../domain/stats-store';

/** In-memory StatsStore for unit tests (same contract as KnexStatsStore, checked by the store contract suite). */
export class FakeStatsStore implements StatsStore {
  readonly seen = new Map<string, number>();
  readonly minutes = new Map<number, number>();
  private readonly totals: Counters = { created: 0, ended: 0, endedRead: 0, accessed: 0, failedAccess: 0, lateBucketWrites: 0 };
  private readonly heartbeats = new Map<string, HeartbeatRecord>();
  down = false;

  private check(): void {
    if (this.down) throw new Error('database down');
  }

  async applyOnce(eventIdDigest: string, delta: CounterDelta, seenAt: number): Promise<boolean> {
    this.check();
    if (this.seen.has(eventIdDigest)) return false;
    this.seen.set(eventIdDigest, seenAt);
    for (const key of Object.keys(this.totals) as Array<keyof Counters>) this.totals[key] += delta[key];
    if (delta.created > 0 && delta.createdMinute !== undefined) {
      this.minutes.set(delta.createdMinute, (this.minutes.get(delta.createdMinute) ?? 0) + delta.created);
    }
    return true;
  }

  async applyBatch(items: ReadonlyArray<{ eventIdDigest: string; delta: CounterDelta }>, seenAt: number): Promise<boolean[]> {
    this.check();
    const results: boolean[] = [];
    for (const item of items) results.push(await this.applyOnce(item.eventIdDigest, item.delta, seenAt));
    return results;
  }

  async counters(): Promise<Counters> {
    this.check();
    return { ...this.totals };
  }

  async current(recentFromMinute: number, recentToMinute: number, heartbeatsSince: number): Promise<CurrentState> {
    const [counters, recentCreated, heartbeats] = await Promise.all([
      this.counters(), this.createdBetween(recentFromMinute, recentToMinute), this.heartbeatsSince(heartbeatsSince),
    ]);
    return { counters, recentCreated, heartbeats };
  }

  async createdBetween(fromMinute: number, toMinute: number): Promise<number> {
    this.check();
    let total = 0;
    for (const [minute, n] of this.minutes) if (minute >= fromMinute && minute <= toMinute) total += n;
    return total;
  }

  async recordHeartbeat(heartbeat: HeartbeatRecord): Promise<void> {
    this.check();
    const key = `${heartbeat.service}/${heartbeat.instance}`;
    const existing = this.heartbeats.get(key);
    if (existing && existing.observedAt > heartbeat.observedAt) return;
    this.heartbeats.set(key, { ...heartbeat, components: { ...heartbeat.components } });
  }

  async heartbeatsSince(since: number): Promise<HeartbeatRecord[]> {
    this.check();
    return [...this.heartbeats.values()].filter((h) => h.observedAt >= since);
  }

  async prune(limits: PruneLimits): Promise<{ seen: number; buckets: number; heartbeats: number }> {
    this.check();
    let seen = 0;
    let buckets = 0;
    let heartbeats = 0;
    for (const [id, at] of this.seen) if (at < limits.seenBefore) { this.seen.delete(id); seen += 1; }
    for (const minute of this.minutes.keys()) if (minute < limits.bucketsBeforeMinute) { this.minutes.delete(minute); buckets += 1; }
    for (const [key, h] of this.heartbeats) if (h.observedAt < limits.heartbeatsBefore) { this.heartbeats.delete(key); heartbeats += 1; }
    return { seen, buckets, heartbeats };
  }

  async ping(): Promise<boolean> {
    return !this.down;
  }
}

/** What one note event changes (DECISIONS 6): counters, and the creation minute for the windows. */
export interface CounterDelta {
  created: number;
  ended: number;
  endedRead: number;
  accessed: number;
  failedAccess: number;
  /** 1 when the creation lands in a minute at least two minutes before the minute it is applied in. */
  lateBucketWrites: number;
  /** Minutes since the epoch of a creation (from the event's timestamp), when created > 0. */
  createdMinute?: number;
}

export interface Counters {
  created: number;
  ended: number;
  endedRead: number;
  accessed: number;
  failedAccess: number;
  /** Moves whenever a bucket of a complete minute changes: the windows' cache key. */
  lateBucketWrites: number;
}

export interface HeartbeatRecord {
  service: string;
  instance: string;
  components: Record<string, string>;
  /** When the heartbeat was sent, never later than when stats received it (epoch ms). */
  observedAt: number;
}

export interface CurrentState {
  counters: Counters;
  recentCreated: number;
  heartbeats: HeartbeatRecord[];
}

export interface PruneLimits {
  /** Seen event ids recorded before this (epoch ms) are forgotten. */
  seenBefore: number;
  /** Creation buckets before this minute are dropped (they are outside every window). */
  bucketsBeforeMinute: number;
  /** Heartbeats of instances silent since before this (epoch ms) are dropped. */
  heartbeatsBefore: number;
}

/**
 * The stats service's storage port. Every read is bounded by the windows, never by the number
 * of notes: counters are single rows, and a window sums at most about 720 hour rows plus 118
 * minute rows.
 */
export interface StatsStore {
  /**
   * Records the event id and applies the delta in one transaction. Returns false (and changes
   * nothing) when the id was seen before: redelivered events count once.
   */
  applyOnce(eventIdDigest: string, delta: CounterDelta, seenAt: number): Promise<boolean>;
  /**
   * The same for several events in one transaction (one commit for a burst of events); returns,
   * per item, whether it counted. An id repeated inside the batch counts once.
   */
  applyBatch(items: ReadonlyArray<{ eventIdDigest: string; delta: CounterDelta }>, seenAt: number): Promise<boolean[]>;
  counters(): Promise<Counters>;
  /**
   * What every statistics answer reads, in one round trip where the store can: the counters, the
   * creations in [recentFromMinute, recentToMinute] (a few minutes: summed from minute buckets), and
   * the heartbeats observed since `heartbeatsSince`.
   */
  current(recentFromMinute: number, recentToMinute: number, heartbeatsSince: number): Promise<CurrentState>;
  /** Creations in the minutes [fromMinute, toMinute], both included. */
  createdBetween(fromMinute: number, toMinute: number): Promise<number>;
  recordHeartbeat(heartbeat: HeartbeatRecord): Promise<void>;
  heartbeatsSince(since: number): Promise<HeartbeatRecord[]>;
  prune(limits: PruneLimits): Promise<{ seen: number; buckets: number; heartbeats: number }>;
  ping(): Promise<boolean>;
}

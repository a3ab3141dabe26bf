import { formatTimestamp, type Clock } from '@vanish/common';
import { SILENT_AFTER_PERIODS, healthFrom, type HealthStatus } from './health';
import { MINUTE_MS } from './note-event-effects';
import type { StatsStore } from './stats-store';

/** SPEC 2.3. */
export interface Statistics {
  total_notes_created: number;
  active_notes: number;
  destroyed_notes: number;
  success_rate: number;
  notes_24h: number;
  notes_7d: number;
  notes_30d: number;
  health_status: HealthStatus;
  generated_at: string;
}

export interface StatsServiceOptions {
  store: StatsStore;
  clock: Clock;
  /** HEARTBEAT_INTERVAL_MS: a component silent for three of these is reported down. */
  heartbeatIntervalMs: number;
}

const DAY_MINUTES = 24 * 60;
const WINDOW_DAYS = [1, 7, 30] as const;

/** success_rate: percent of ended notes that were read, two decimals; 100 before any note ended. */
export function successRate(ended: number, endedRead: number): number {
  if (ended <= 0) return 100;
  return Math.round((endedRead / ended) * 10_000) / 100;
}

/**
 * Builds the statistics object from counters and buckets: a fixed number of small reads, the same
 * at a thousand notes as at a hundred million (DECISIONS 6).
 */
export class StatsService {
  /** Window sums over complete minutes (all but the last two), valid for one minute and one late-write count. */
  private settled: { minute: number; lateWrites: number; sums: readonly number[] } | undefined;
  /** The read under way, and the one that will start when it ends (shared by everyone who asked meanwhile). */
  private current: Promise<Statistics> | undefined;
  private following: Promise<Statistics> | undefined;

  constructor(private readonly options: StatsServiceOptions) {}

  /**
   * Concurrent callers share reads, but nobody gets an answer read before they asked: a caller
   * who arrives while a read is under way waits for the next one, which starts when the current
   * one ends and serves everyone who arrived meanwhile. Under 50 concurrent requests the store
   * sees about two reads per round trip instead of fifty; one request at a time is unchanged.
   */
  statistics(): Promise<Statistics> {
    if (!this.current) {
      const read = this.read().finally(() => {
        if (this.current === read) this.current = undefined;
      });
      this.current = read;
      return read;
    }
    if (!this.following) {
      this.following = this.current.then(this.startFollowing, this.startFollowing);
    }
    return this.following;
  }

  private readonly startFollowing = (): Promise<Statistics> => {
    this.following = undefined;
    return this.statistics();
  };

  private async read(): Promise<Statistics> {
    const { store, clock, heartbeatIntervalMs } = this.options;
    const now = clock.now();
    const nowMs = now.getTime();
    const nowMinute = Math.floor(nowMs / MINUTE_MS);
    // Steady state: one read of three small parts (counters, the last two minute buckets, fresh heartbeats).
    const { counters, recentCreated: recent, heartbeats } = await store.current(
      nowMinute - 1, nowMinute, nowMs - SILENT_AFTER_PERIODS * heartbeatIntervalMs,
    );
    // "In the last N days, to the minute": the current minute and the N*1440-1 before it. The part
    // before the last two minutes only changes when the minute turns or a late event lands there
    // (which moves lateBucketWrites); then it is summed again, at most ~840 bucket rows a window.
    let settled = this.settled;
    if (!settled || settled.minute !== nowMinute || settled.lateWrites !== counters.lateBucketWrites) {
      const sums = await Promise.all(WINDOW_DAYS.map((days) => store.createdBetween(nowMinute - days * DAY_MINUTES + 1, nowMinute - 2)));
      settled = { minute: nowMinute, lateWrites: counters.lateBucketWrites, sums };
      this.settled = settled;
    }
    const [day, week, month] = settled.sums.map((sum) => sum + recent);
    return {
      total_notes_created: counters.created,
      // Ends can be counted before their creation when a retry reorders events: never show a negative.
      active_notes: Math.max(0, counters.created - counters.ended),
      destroyed_notes: counters.ended,
      success_rate: successRate(counters.ended, counters.endedRead),
      notes_24h: day,
      notes_7d: week,
      notes_30d: month,
      health_status: healthFrom(heartbeats, nowMs, heartbeatIntervalMs),
      generated_at: formatTimestamp(now),
    };
  }
}

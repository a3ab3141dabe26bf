import type { Registry } from 'prom-client';
import type { Logger } from './logger';
import { Counter } from './metrics';

export interface DependencyStateOptions {
  /** What is watched, as the log lines name it: `database`, `redis`, `rabbitmq`. */
  dependency: string;
  logger: Logger;
  /** Milliseconds since the epoch; injected by tests. */
  now?: () => number;
  /** At most one "still unreachable" summary per this many milliseconds (default 5 s). */
  summaryEveryMs?: number;
  /**
   * The level of the line when it goes: `error` when the work that needs it fails (the default),
   * `warn` when a fallback answers instead (the gateway's limits from memory while Redis is gone).
   */
  downLevel?: 'error' | 'warn';
  /** What one failure is, in the plural, for the summaries: `requests failed` by default. */
  counting?: string;
  /**
   * How long after the line that said it was back a new failure opens a quiet lapse instead of a new
   * outage (default six summaries, 30 s): a recovering dependency's stragglers (timeouts of work
   * queued during the outage) are not each a new outage.
   */
  settleMs?: number;
  /** Called on every failure: the per-request count belongs in a metric (dependencyFailureCounter). */
  onFailure?: (dependency: string) => void;
}

/** What one failure carries into its debug line (and into the outage's first line). */
export interface FailureDetail {
  requestId?: string;
  err?: unknown;
  [field: string]: unknown;
}

export const DEFAULT_SUMMARY_EVERY_MS = 5_000;

/**
 * One dependency's availability as the logs tell it: an outage is one event, not a line per
 * request. The first failure logs one line when it goes (error, or warn when a fallback answers);
 * later failures are counted, logged at debug with their request id, and summed up in at most one
 * warn line per `summaryEveryMs` ("database still unreachable: 1,234 requests failed in the last
 * 5 s"); the first success after them logs one info line with the outage's length and total.
 *
 * A dependency that flaps (fails again within `settleMs` of the line that said it was back)
 * opens a quiet lapse: no new line unless it is still down when a summary would be due, when the
 * lapse is announced as an outage after all. So even a flapping dependency writes at most an error
 * and an info line per interval. Failures of quiet lapses that ended are counted into the next line.
 *
 * The per-request counts belong in metrics (each caller has its counter): this only keeps the log
 * readable at any request rate. No timer: the clock is read on each report, so a test moves it.
 */
export class DependencyState {
  private readonly now: () => number;
  private readonly summaryEveryMs: number;
  private readonly logger: Logger;
  private downSince: number | undefined;
  /** Whether this outage's first line was written (false during a quiet lapse). */
  private announced = false;
  private failedInOutage = 0;
  private failedSinceSummary = 0;
  private lastSummaryAt = 0;
  private lastBackLineAt: number | undefined;
  /** Failures of quiet lapses that ended before any line named them. */
  private failedInLapses = 0;

  constructor(private readonly options: DependencyStateOptions) {
    this.now = options.now ?? Date.now;
    this.summaryEveryMs = options.summaryEveryMs ?? DEFAULT_SUMMARY_EVERY_MS;
    this.logger = options.logger;
  }

  get dependency(): string {
    return this.options.dependency;
  }

  /** True between the first failure and the next success. */
  get isDown(): boolean {
    return this.downSince !== undefined;
  }

  /** One piece of work failed because the dependency cannot be reached. */
  failed(detail: FailureDetail = {}): void {
    const now = this.now();
    const { dependency } = this.options;
    const fields = describeDetail(detail);
    this.options.onFailure?.(dependency);
    this.logger.debug(`${dependency} unreachable: this one failed`, { dependency, ...fields });
    if (this.downSince === undefined) {
      this.open(now, fields, 1);
      return;
    }
    this.failedInOutage += 1;
    this.failedSinceSummary += 1;
    if (now - this.lastSummaryAt < this.summaryEveryMs) return;
    if (this.announced) this.summarise(now);
    else this.announce(fields);
  }

  /**
   * The dependency was seen unreachable where no piece of work failed of it: a driver's own attempt
   * to connect, which the work waiting on that connection reports as its own failure. Opens the
   * outage (its first line can then say what the driver saw) but counts nothing, so each failed
   * request is counted once in the summaries and in `<prefix>_dependency_failures_total`.
   */
  seenUnreachable(detail: FailureDetail = {}): void {
    const { dependency } = this.options;
    const fields = describeDetail(detail);
    this.logger.debug(`${dependency} unreachable: seen by its driver`, { dependency, ...fields });
    if (this.downSince === undefined) this.open(this.now(), fields, 0);
  }

  /** The dependency answered: ends an outage, if one was under way. */
  answered(): void {
    if (this.downSince === undefined) return;
    const now = this.now();
    const { dependency } = this.options;
    if (this.announced) {
      this.logger.info(`${dependency} reachable again`, {
        dependency,
        downForMs: now - this.downSince,
        failed: this.failedInOutage,
      });
      this.lastBackLineAt = now;
    } else {
      this.failedInLapses += this.failedInOutage;
    }
    this.downSince = undefined;
    this.announced = false;
    this.failedInOutage = 0;
    this.failedSinceSummary = 0;
  }

  private open(now: number, fields: Record<string, unknown>, failed: number): void {
    this.downSince = now;
    this.lastSummaryAt = now;
    this.failedInOutage = failed;
    this.failedSinceSummary = 0;
    this.announced = false;
    const settleMs = this.options.settleMs ?? 6 * this.summaryEveryMs;
    const flapping = this.lastBackLineAt !== undefined && now - this.lastBackLineAt < settleMs;
    if (!flapping) this.announce(fields);
  }

  private announce(fields: Record<string, unknown>): void {
    const { dependency } = this.options;
    const level = this.options.downLevel ?? 'error';
    const lapses = this.failedInLapses > 0 ? { failedInBriefLapsesBefore: this.failedInLapses } : {};
    this.logger[level](`${dependency} unreachable`, { dependency, ...fields, failed: this.failedInOutage, ...lapses });
    this.announced = true;
    this.failedInLapses = 0;
    this.lastSummaryAt = this.now();
    this.failedSinceSummary = 0;
  }

  private summarise(now: number): void {
    const { dependency } = this.options;
    const seconds = Math.round((now - this.lastSummaryAt) / 100) / 10;
    const count = this.failedSinceSummary;
    this.logger.warn(`${dependency} still unreachable: ${count.toLocaleString('en-US')} ${this.options.counting ?? 'requests failed'} in the last ${seconds} s`, {
      dependency,
      failed: count,
      downForMs: now - (this.downSince ?? now),
    });
    this.lastSummaryAt = now;
    this.failedSinceSummary = 0;
  }
}

function describeDetail(detail: FailureDetail): Record<string, unknown> {
  const { err, ...rest } = detail;
  if (err === undefined) return rest;
  return { ...rest, err: describeCause(err) };
}

/** The innermost message of a wrapped error: `Database unavailable` says less than `connect ECONNREFUSED`. */
function describeCause(err: unknown): string {
  let current: unknown = err;
  let message = err instanceof Error ? err.message : String(err);
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    message = current.message || (current as { code?: string }).code || message;
    current = current.cause;
  }
  return message;
}

/**
 * The dependencies of one service, each a DependencyState made on first use with the service's
 * logger: the error handler and the workers of a service report into the same one.
 */
export class Outages {
  private readonly states = new Map<string, DependencyState>();
  private readonly defaults: Omit<DependencyStateOptions, 'dependency'>;
  private readonly dependencyOf: ((err: unknown) => string | undefined) | undefined;

  /**
   * `dependencyOf` names the dependency of an error that does not say it itself (a driver's
   * "connect ECONNREFUSED" reaching the error handler): `isDatabaseUnavailable(err) ? 'database' : undefined`.
   */
  constructor(options: Omit<DependencyStateOptions, 'dependency'> & { dependencyOf?: (err: unknown) => string | undefined }) {
    const { dependencyOf, ...defaults } = options;
    this.defaults = defaults;
    this.dependencyOf = dependencyOf;
  }

  of(dependency: string, options: Partial<Omit<DependencyStateOptions, 'dependency'>> = {}): DependencyState {
    let state = this.states.get(dependency);
    if (!state) {
      state = new DependencyState({ ...this.defaults, ...options, dependency });
      this.states.set(dependency, state);
    }
    return state;
  }

  /** The state an error belongs to: a DependencyUnavailableError names its dependency, `dependencyOf` others. */
  forError(err: unknown): DependencyState | undefined {
    const named = (err as { dependency?: unknown } | null)?.dependency;
    const dependency = err instanceof Error && typeof named === 'string' ? named : this.dependencyOf?.(err);
    return dependency === undefined ? undefined : this.of(dependency);
  }
}

/** `<prefix>_dependency_failures_total{dependency}`: every failure a DependencyState was told of. */
export function dependencyFailureCounter(registry: Registry, prefix: string): (dependency: string) => void {
  const counter = new Counter({
    name: `${prefix}_dependency_failures_total`,
    help: 'Work that failed because a dependency could not be reached (the logs tell the outage once; this counts each)',
    labelNames: ['dependency'] as const,
    registers: [registry],
  });
  return (dependency) => counter.inc({ dependency });
}

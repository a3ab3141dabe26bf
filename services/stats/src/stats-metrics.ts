import { Counter, Histogram, type Registry } from 'prom-client';

export interface StatsMetrics {
  consumed(event: string, outcome: 'counted' | 'duplicate' | 'malformed'): void;
  lag(seconds: number): void;
  heartbeat(service: string, outcome: 'recorded' | 'malformed' | 'dropped'): void;
}

function counter(registry: Registry, name: string, help: string, labelNames: string[]): Counter<string> {
  return (registry.getSingleMetric(name) as Counter<string> | undefined) ?? new Counter({ name, help, labelNames, registers: [registry] });
}

/** Labels are event kinds and service names: closed sets, never ids. */
export function createStatsMetrics(registry: Registry): StatsMetrics {
  const consumed = counter(registry, 'stats_events_consumed_total', 'Note events consumed, by kind and outcome', ['event', 'outcome']);
  const heartbeats = counter(registry, 'stats_heartbeats_consumed_total', 'Heartbeats consumed, by service and outcome', ['service', 'outcome']);
  const lag = (registry.getSingleMetric('stats_consumer_lag_seconds') as Histogram<string> | undefined) ?? new Histogram({
    name: 'stats_consumer_lag_seconds',
    help: 'From the event timestamp to its counter update (now - event timestamp)',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600],
    registers: [registry],
  });
  return {
    consumed: (event, outcome) => consumed.inc({ event, outcome }),
    lag: (seconds) => lag.observe(Math.max(0, seconds)),
    heartbeat: (service, outcome) => heartbeats.inc({ service, outcome }),
  };
}

export const noStatsMetrics: StatsMetrics = { consumed() {}, lag() {}, heartbeat() {} };

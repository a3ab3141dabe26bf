import { Counter, Gauge, type Registry } from 'prom-client';

/** Metrics are looked up before being created, so several buses may share one registry. */
function counter(registry: Registry, name: string, help: string, labelNames: string[]): Counter<string> {
  return (registry.getSingleMetric(name) as Counter<string> | undefined) ?? new Counter({ name, help, labelNames, registers: [registry] });
}

function gauge(registry: Registry, name: string, help: string, labelNames: string[] = []): Gauge<string> {
  return (registry.getSingleMetric(name) as Gauge<string> | undefined) ?? new Gauge({ name, help, labelNames, registers: [registry] });
}

export interface BusMetrics {
  published(routingKey: string, count: number): void;
  handled(queue: string, outcome: 'ack' | 'retry' | 'dead_letter'): void;
  reconnected(): void;
  connected(up: boolean): void;
}

export const noBusMetrics: BusMetrics = { published() {}, handled() {}, reconnected() {}, connected() {} };

/** Labels are routing keys and queue names: a closed set chosen by the code, never user data. */
export function createBusMetrics(registry: Registry | undefined, transport: 'rabbitmq' | 'in_process'): BusMetrics {
  if (!registry) return noBusMetrics;
  const published = counter(registry, 'bus_messages_published_total', 'Messages published (confirmed by the broker)', ['transport', 'routing_key']);
  const handled = counter(registry, 'bus_messages_handled_total', 'Deliveries handled, by outcome', ['transport', 'queue', 'outcome']);
  const reconnects = counter(registry, 'bus_reconnects_total', 'Broker reconnections after a lost connection', ['transport']);
  const up = gauge(registry, 'bus_connected', '1 while connected to the broker', ['transport']);
  return {
    published: (routingKey, count) => published.inc({ transport, routing_key: routingKey }, count),
    handled: (queue, outcome) => handled.inc({ transport, queue, outcome }),
    reconnected: () => reconnects.inc({ transport }),
    connected: (isUp) => up.set({ transport }, isUp ? 1 : 0),
  };
}

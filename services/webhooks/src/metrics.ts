import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Labels are closed sets chosen by the code: never a URL, host, note reference or id. */
export interface WebhooksMetrics {
  outcome(outcome: 'delivered' | 'gone' | 'refused' | 'retry' | 'dead_letter'): void;
  attempt(result: '2xx' | '4xx' | '5xx' | '410' | 'error' | 'refused' | 'circuit_open' | 'host_busy'): void;
  latency(seconds: number): void;
  openCircuits(count: number): void;
  queueDepth(queue: 'main' | 'dead_letter', depth: number): void;
}

export function createWebhooksMetrics(registry: Registry): WebhooksMetrics {
  const outcomes = new Counter({ name: 'webhook_deliveries_total', help: 'Webhook deliveries (per target) and event outcomes', labelNames: ['outcome'], registers: [registry] });
  const attempts = new Counter({ name: 'webhook_delivery_attempts_total', help: 'Delivery attempts by result', labelNames: ['result'], registers: [registry] });
  const latency = new Histogram({
    name: 'webhook_delivery_duration_seconds', help: 'Time from sending a webhook to its answer',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5], registers: [registry],
  });
  const circuits = new Gauge({ name: 'webhook_open_circuits', help: 'Receiver hosts whose circuit is open', registers: [registry] });
  const depth = new Gauge({ name: 'webhook_queue_depth', help: 'Messages waiting in the webhook queues', labelNames: ['queue'], registers: [registry] });
  for (const outcome of ['delivered', 'gone', 'refused', 'retry', 'dead_letter']) outcomes.inc({ outcome }, 0);
  return {
    outcome: (outcome) => outcomes.inc({ outcome }),
    attempt: (result) => attempts.inc({ result }),
    latency: (seconds) => latency.observe(seconds),
    openCircuits: (count) => circuits.set(count),
    queueDepth: (queue, value) => depth.set({ queue }, value),
  };
}

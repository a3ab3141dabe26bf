import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { NextFunction, Request, Response } from 'express';

/**
 * How often the event loop delay is sampled (prom-client's default is every 10 ms). Each sample is a
 * timer that wakes the loop, also at rest: at 10 ms that was 100 wake-ups a second and about 10 ms of
 * CPU a second per process on the test machine (docs/performance.md, issue 35). A loop blocked for
 * longer than this still shows in the nodejs_eventloop_lag_* metrics; shorter stalls do less.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/**
 * One registry per service instance, injected everywhere: never prom-client's global one. With
 * `collectDefaults` it also shows the process's default metrics (CPU, memory, heap, GC, event-loop lag),
 * labelled with this registry's service like the rest.
 */
export function createRegistry(service: string, collectDefaults = true): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (collectDefaults) {
    const defaults = processDefaultMetrics();
    for (const { name } of defaults.getMetricsAsArray()) registry.registerMetric(defaults.getSingleMetric(name)!);
  }
  return registry;
}

let defaultMetrics: Registry | undefined;

/**
 * The default metrics describe the process, so the process collects them once and every service registry
 * in it shows the same metric objects. The all-in-one runs five services in one process: five sets were
 * five event-loop delay histograms (369 KB of memory each), five samplers of the same loop and five GC
 * observers (docs/performance.md, issue 35). What that changes there: the event-loop lag percentiles are
 * one window, which a scrape of any of the services ends (prom-client resets the histogram when it is read).
 * A separate service has one registry, as before.
 */
function processDefaultMetrics(): Registry {
  if (defaultMetrics === undefined) {
    defaultMetrics = new Registry();
    collectDefaultMetrics({ register: defaultMetrics, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  }
  return defaultMetrics;
}

/**
 * RED metrics per route. The label is the matched route template (never the raw path, which
 * would put note uuids into metrics); unmatched requests are labelled by a fixed name.
 */
export function httpMetrics(registry: Registry, prefix: string) {
  const duration = new Histogram({
    name: `${prefix}_http_request_duration_seconds`,
    help: 'HTTP request duration by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // One clock reading and one listener per request; prom-client's startTimer added two closures, two
  // hrtime arrays and a merged labels object to each (issue 35).
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (res.locals.routeName as string | undefined) ?? routeTemplate(req);
      duration.observe({ method: req.method, route, status: String(res.statusCode) }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
}

function routeTemplate(req: Request): string {
  const path = req.route?.path;
  if (typeof path === 'string') return `${req.baseUrl}${path}`;
  return 'unmatched';
}

export { Counter, Gauge, Histogram, Registry };

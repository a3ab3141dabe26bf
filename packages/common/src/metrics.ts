import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { NextFunction, Request, Response } from 'express';

/**
 * How often the event loop delay is sampled (prom-client's default is every 10 ms). Each sample is a
 * timer that wakes the loop, also at rest: at 10 ms that was 100 wake-ups a second and about 10 ms of
 * CPU a second per process on the test machine (docs/performance.md, issue 35). A loop blocked for
 * longer than this still shows in the nodejs_eventloop_lag_* metrics; shorter stalls do less.
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** One registry per service instance, injected everywhere: never prom-client's global one. */
export function createRegistry(service: string, collectDefaults = true): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  if (collectDefaults) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
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
  return (req: Request, res: Response, next: NextFunction): void => {
    const end = duration.startTimer();
    res.on('finish', () => {
      const route = (res.locals.routeName as string | undefined) ?? routeTemplate(req);
      end({ method: req.method, route, status: String(res.statusCode) });
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

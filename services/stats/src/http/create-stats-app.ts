import express from 'express';
import {
  apiHeaders, apiNotFound, errorHandler, httpMetrics, inSequence, methodsOnly, requestId, routeName, type Logger, type Outages,
} from '@vanish/common';
import type { Registry } from 'prom-client';
import type { StatsService } from '../domain/stats-service';

export interface StatsAppOptions {
  stats: StatsService;
  logger: Logger;
  registry: Registry;
  /** The service's dependencies: a 503 for one that is down is logged as part of its outage. */
  outages?: Outages;
}

/**
 * The stats service's public port: GET /api/stats.php (SPEC 4.3) and nothing else. Rate limits
 * are the gateway's; every answer has the API headers; errors have the SPEC 7 body.
 */
export function createStatsApp({ stats, logger, registry, outages }: StatsAppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // One express layer for what every request passes (docs/performance.md: each layer costs the router's matching).
  app.use(inSequence([requestId, httpMetrics(registry, 'stats'), apiHeaders]));
  app.all('/api/stats.php', routeName('/api/stats.php'), methodsOnly(['GET']), async (_req, res) => {
    res.json({ success: true, stats: await stats.statistics() });
  });
  app.use(routeName('unmatched'), apiNotFound);
  app.use(errorHandler(logger, outages));
  return app;
}

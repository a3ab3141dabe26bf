import express from 'express';
import { errorHandler, httpMetrics, requestId, NotFoundError, type Logger, type Outages, type Registry } from '@vanish/common';
import type { UnsubscribeService } from '../domain/unsubscribe-service';
import { unsubscribeRoutes } from './unsubscribe-routes';

/** The mailer's public port: only the unsubscribe pages (routed here by the gateway). */
export function createMailerApp(deps: { unsubscribe: UnsubscribeService; registry: Registry; logger: Logger; outages?: Outages }): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(requestId);
  app.use(httpMetrics(deps.registry, 'mailer'));
  app.use(unsubscribeRoutes(deps.unsubscribe));
  app.use((_req, _res, next) => next(new NotFoundError('NOT_FOUND', 'Not found')));
  // A database outage answers 503 in the error shape (the store says DependencyUnavailableError), told once in the log.
  app.use(errorHandler(deps.logger, deps.outages));
  return app;
}

import type { RequestHandler } from 'express';
import type { Logger } from '@vanish/common';
import { matchRoute, redactPath, type RouteMatch } from './route-table';

/**
 * One JSON line per request: id, method, route template, redacted path (no note uuid, no
 * unsubscribe token, no query string), status, duration. Never a body, never a client address.
 */
export function accessLog(logger: Logger): RequestHandler {
  // Lines at info are off (LOG_LEVEL=warn or above; the level is fixed at start): no clock, no listeners.
  if (logger.isEnabled?.('info') === false) return (_req, _res, next) => next();
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    let logged = false;
    const log = (): void => {
      if (logged) return;
      logged = true;
      const match = (res.locals.routeMatch as RouteMatch | undefined) ?? matchRoute(req.path);
      logger.info('request', {
        requestId: res.locals.requestId,
        method: req.method,
        route: res.locals.routeName,
        path: redactPath(req.path, match),
        status: res.writableFinished ? res.statusCode : 'aborted',
        durationMs: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        limitedFromMemory: res.locals.limitFromFallback === true ? true : undefined,
      });
    };
    res.once('finish', log);
    res.once('close', log);
    next();
  };
}

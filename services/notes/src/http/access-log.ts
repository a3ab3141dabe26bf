import type { RequestHandler } from 'express';
import type { Logger } from '@vanish/common';

/** Anything in a path that could be a note uuid (or part of one), for requests no route matched. */
const SECRET_LOOKING = /[0-9A-Za-z_-]{16,}|[0-9a-fA-F-]{8,}-[0-9a-fA-F-]{4,}/g;

/**
 * The path as logs may show it: the matched route template when there is one (`/api/view/:uuid.php`,
 * `/:uuid`), else the raw path with every long token replaced, so a note link typed at a wrong path
 * still never lands in a log (DECISIONS 1). Query strings are dropped.
 */
export function redactedPath(routeName: string | undefined, rawPath: string): string {
  if (routeName) return routeName;
  // Escaped ASCII is decoded first, so that `%33%66...` cannot smuggle a uuid past the pattern.
  const bare = rawPath.split('?')[0]!.replace(/%([0-7][0-9a-f])/gi, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return bare.replace(SECRET_LOOKING, ':redacted').slice(0, 200);
}

/** One JSON line per finished request: method, route template, status, duration, request id. */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info('request', {
        requestId: res.locals.requestId,
        method: req.method,
        route: redactedPath(res.locals.routeName as string | undefined, req.originalUrl),
        status: res.statusCode,
        ms: Math.round(ms * 10) / 10,
      });
    });
    next();
  };
}

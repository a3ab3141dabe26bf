import type { Request, RequestHandler, Response } from 'express';
import { API_VERSION, baseSecurityHeaders, PAGE_CSP } from '@vanish/common';
import type { GatewayRoute } from './route-table';

const HSTS = 'max-age=31536000; includeSubDomains';

/**
 * DECISIONS 8 on every answer, the gateway's own and the upstreams' alike: no-store, nosniff,
 * no-referrer; API-Version on /api; a strict CSP and DENY framing on pages (an upstream page may
 * bring its own CSP, which then stands); HSTS whenever the request came over HTTPS.
 */
export function applyAnswerHeaders(req: Request, res: Response): void {
  baseSecurityHeaders(res);
  if (res.locals.routeKind === 'api') {
    res.setHeader('API-Version', API_VERSION);
  } else {
    const embed = (res.locals.route as GatewayRoute | undefined)?.embed;
    if (!res.hasHeader('Content-Security-Policy')) res.setHeader('Content-Security-Policy', PAGE_CSP);
    // DECISIONS 15: the embedded form is framed only where its own CSP's frame-ancestors allows (the strict
    // default above, frame-ancestors 'none', stands until the page brings its own); every other page is DENY.
    if (embed === 'frame') res.removeHeader('X-Frame-Options');
    else res.setHeader('X-Frame-Options', 'DENY');
    if (embed === 'script') {
      res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
      res.setHeader('Access-Control-Allow-Origin', '*');
    }
  }
  if (req.secure) res.setHeader('Strict-Transport-Security', HSTS);
}

export const answerHeaders: RequestHandler = (req, res, next) => {
  applyAnswerHeaders(req, res);
  next();
};

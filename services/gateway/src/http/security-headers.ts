import type { Request, RequestHandler, Response } from 'express';
import { API_VERSION, baseSecurityHeaders, PAGE_CSP } from '@vanish/common';

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
    if (!res.hasHeader('Content-Security-Policy')) res.setHeader('Content-Security-Policy', PAGE_CSP);
    res.setHeader('X-Frame-Options', 'DENY');
  }
  if (req.secure) res.setHeader('Strict-Transport-Security', HSTS);
}

export const answerHeaders: RequestHandler = (req, res, next) => {
  applyAnswerHeaders(req, res);
  next();
};

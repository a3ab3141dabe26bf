import type { Request, RequestHandler, Response } from 'express';
/**
 * DECISIONS 8 on every answer, the gateway's own and the upstreams' alike: no-store, nosniff,
 * no-referrer; API-Version on /api; a strict CSP and DENY framing on pages (an upstream page may
 * bring its own CSP, which then stands); HSTS whenever the request came over HTTPS.
 */
export declare function applyAnswerHeaders(req: Request, res: Response): void;
export declare const answerHeaders: RequestHandler;

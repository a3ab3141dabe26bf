"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.cors = cors;
const EXPOSED = ['API-Version', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id'];
/**
 * CORS for /api only, and only for the origins CORS_ORIGINS lists (DECISIONS 8: off by default).
 * A listed origin is echoed back; any other origin gets no CORS header at all, so the browser
 * refuses to hand it the answer. No credentials: the API has no cookies.
 */
function cors(origins) {
    const allowed = new Set(origins);
    return (req, res, next) => {
        if (allowed.size === 0 || res.locals.routeKind !== 'api') {
            next();
            return;
        }
        res.vary('Origin');
        const origin = req.headers.origin;
        if (origin !== undefined && allowed.has(origin)) {
            res.setHeader('Access-Control-Allow-Origin', origin);
            res.setHeader('Access-Control-Expose-Headers', EXPOSED.join(', '));
            const route = res.locals.route;
            if (req.method === 'OPTIONS' && route && req.headers['access-control-request-method'] !== undefined) {
                res.setHeader('Access-Control-Allow-Methods', Object.keys(route.methods).join(', '));
                res.setHeader('Access-Control-Allow-Headers', 'Content-Type, X-Request-Id');
                res.setHeader('Access-Control-Max-Age', '600');
            }
        }
        next();
    };
}
//# sourceMappingURL=cors.js.map
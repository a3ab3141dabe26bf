"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.answerHeaders = void 0;
exports.applyAnswerHeaders = applyAnswerHeaders;
const common_1 = require("@vanish/common");
const HSTS = 'max-age=31536000; includeSubDomains';
/**
 * DECISIONS 8 on every answer, the gateway's own and the upstreams' alike: no-store, nosniff,
 * no-referrer; API-Version on /api; a strict CSP and DENY framing on pages (an upstream page may
 * bring its own CSP, which then stands); HSTS whenever the request came over HTTPS.
 */
function applyAnswerHeaders(req, res) {
    (0, common_1.baseSecurityHeaders)(res);
    if (res.locals.routeKind === 'api') {
        res.setHeader('API-Version', common_1.API_VERSION);
    }
    else {
        if (!res.hasHeader('Content-Security-Policy'))
            res.setHeader('Content-Security-Policy', common_1.PAGE_CSP);
        res.setHeader('X-Frame-Options', 'DENY');
    }
    if (req.secure)
        res.setHeader('Strict-Transport-Security', HSTS);
}
const answerHeaders = (req, res, next) => {
    applyAnswerHeaders(req, res);
    next();
};
exports.answerHeaders = answerHeaders;
//# sourceMappingURL=security-headers.js.map
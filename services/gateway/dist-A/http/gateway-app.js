"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.createGatewayApp = createGatewayApp;
const express_1 = __importDefault(require("express"));
const common_1 = require("@vanish/common");
const client_key_1 = require("../domain/client-key");
const limit_policy_1 = require("../domain/limit-policy");
const access_log_1 = require("./access-log");
const body_guard_1 = require("./body-guard");
const cors_1 = require("./cors");
const route_table_1 = require("./route-table");
const security_headers_1 = require("./security-headers");
const send_error_1 = require("./send-error");
/**
 * The public door, in the order a request meets it: request id and access log; route lookup
 * (unknown /api paths answer 404 here); DECISIONS 8 headers; HTTPS; CORS; methods (OPTIONS 204,
 * others 405 with Allow); the per-client limit; the body limits; the relay (shared for the GETs of
 * routes whose answer is everyone's). Every refusal is
 * answered by the gateway itself in the SPEC 7 error shape.
 */
function createGatewayApp(options) {
    const app = (0, express_1.default)();
    app.disable('x-powered-by');
    app.disable('etag');
    app.set('trust proxy', options.trustProxy);
    // One express layer runs the whole door: the router's per-layer work (prefix trimming, parameter
    // processing, a layer match) for twelve layers cost more than the steps themselves (issue 18).
    app.use((0, common_1.inSequence)([
        (_req, res, next) => {
            if (options.isDraining())
                res.setHeader('Connection', 'close');
            next();
        },
        common_1.requestId,
        (0, common_1.httpMetrics)(options.registry, 'gateway'),
        (0, access_log_1.accessLog)(options.logger),
        lookUpRoute,
        security_headers_1.answerHeaders,
        requireHttps(options.requireHttps, options.publicBaseUrl),
        (0, cors_1.cors)(options.corsOrigins),
        checkMethod,
        limit(options),
        (0, body_guard_1.bodyGuard)(),
        (req, res, next) => {
            const route = res.locals.route;
            const relay = route.sharedRead && req.method === 'GET' ? options.sharedReads : options.proxies;
            relay[route.upstream](req, res, next);
        },
    ]));
    app.use((err, req, res, _next) => {
        (0, send_error_1.sendError)(req, res, err);
    });
    return app;
}
const lookUpRoute = (req, res, next) => {
    const match = (0, route_table_1.matchRoute)(req.path);
    res.locals.routeMatch = match;
    if (match.found) {
        res.locals.route = match.route;
        res.locals.routeKind = match.route.kind;
        res.locals.routeName = match.route.template;
        next();
        return;
    }
    res.locals.routeKind = match.kind;
    res.locals.routeName = match.template;
    next(new common_1.NotFoundError('NOT_FOUND', match.kind === 'api' ? 'No such API endpoint' : 'Page not found'));
};
function requireHttps(required, publicBaseUrl) {
    const publicOrigin = publicBaseUrl?.startsWith('https:') ? new URL(publicBaseUrl).origin : undefined;
    return (req, res, next) => {
        if (!required || req.secure) {
            next();
            return;
        }
        if (res.locals.routeKind === 'api') {
            next(new common_1.ValidationError('HTTPS_REQUIRED', 'HTTPS is required', { parameter: null }));
            return;
        }
        const origin = publicOrigin ?? httpsOriginOf(req.headers.host);
        if (!origin) {
            next(new common_1.ValidationError('HTTPS_REQUIRED', 'HTTPS is required', { parameter: null }));
            return;
        }
        res.redirect(308, `${origin}${req.originalUrl}`);
    };
}
function httpsOriginOf(host) {
    if (!host || !/^[A-Za-z0-9.\-:[\]]+$/.test(host))
        return undefined;
    try {
        const url = new URL(`https://${host}`);
        // The public port of a plain-HTTP listener is not the HTTPS one: drop it.
        return `https://${url.hostname}`;
    }
    catch {
        return undefined;
    }
}
const checkMethod = (req, res, next) => {
    const route = res.locals.route;
    if (req.method === 'OPTIONS') {
        res.setHeader('Allow', route.allow);
        res.status(204).end();
        return;
    }
    if (!(req.method in route.methods)) {
        next(new common_1.MethodNotAllowedError((0, route_table_1.allowedMethods)(route)));
        return;
    }
    next();
};
function limit(options) {
    const clientKey = (0, client_key_1.createClientKeyDeriver)(options.limiterKey);
    return async (req, res, next) => {
        const route = res.locals.route;
        const action = route.methods[req.method];
        if (action === undefined) {
            next();
            return;
        }
        const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
        let decision;
        try {
            decision = await options.limiter.consume(action, clientKey(address));
        }
        catch (err) {
            // Cannot happen with the shipped limiters (Redis falls back to memory); if it does, the
            // request goes through rather than the site going down, and the error is loud.
            options.logger.error('rate limiter failed; request let through', { action, err: err.message });
            next();
            return;
        }
        const headers = (0, limit_policy_1.rateLimitHeaders)(decision);
        res.locals.limitFromFallback = decision.fromFallback;
        if (!decision.allowed) {
            options.metrics.rateLimited.inc({ action });
            next(new common_1.RateLimitedError(decision.resetSeconds, headers));
            return;
        }
        for (const [name, value] of Object.entries(headers))
            res.setHeader(name, value);
        next();
    };
}
//# sourceMappingURL=gateway-app.js.map
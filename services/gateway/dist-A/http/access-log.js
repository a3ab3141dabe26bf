"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.accessLog = accessLog;
const route_table_1 = require("./route-table");
/**
 * One JSON line per request: id, method, route template, redacted path (no note uuid, no
 * unsubscribe token, no query string), status, duration. Never a body, never a client address.
 */
function accessLog(logger) {
    return (req, res, next) => {
        const started = process.hrtime.bigint();
        let logged = false;
        const log = () => {
            if (logged)
                return;
            logged = true;
            const match = res.locals.routeMatch ?? (0, route_table_1.matchRoute)(req.path);
            logger.info('request', {
                requestId: res.locals.requestId,
                method: req.method,
                route: res.locals.routeName,
                path: (0, route_table_1.redactPath)(req.path, match),
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
//# sourceMappingURL=access-log.js.map
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.sendError = sendError;
exports.wantsPage = wantsPage;
const common_1 = require("@vanish/common");
const error_pages_1 = require("./error-pages");
const security_headers_1 = require("./security-headers");
/** How long, and how much, an unread request body is read and thrown away before an early answer. */
const DRAIN_MAX_MS = 1000;
const DRAIN_MAX_BYTES = 16 * 1024 * 1024;
/**
 * Sends an error in the SPEC 7 body (with the error's own headers, such as Allow or Retry-After).
 * Pages that a browser asked for get a small HTML page in the reader's language instead (error-pages.ts);
 * /api answers stay JSON, in English.
 *
 * When the answer comes before the request body was read (a 429, a body over the limit, a
 * compressed body), the rest of the body is read and discarded for a bounded time first, then
 * the connection is closed: answering at once and closing would make the client's TCP stack
 * reset the connection, and the client would see "connection reset" instead of our 400/429.
 * Nothing is kept while draining, so memory stays flat.
 */
function sendError(req, res, err) {
    const appError = (0, common_1.bodyErrorToAppError)(err) ?? (0, common_1.toAppError)(err);
    if (res.headersSent) {
        res.destroy();
        return;
    }
    const announcesBody = req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
    const bodyPending = announcesBody && !(req.complete || req.readableEnded || req.destroyed);
    if (!bodyPending) {
        write(req, res, appError);
        return;
    }
    res.setHeader('Connection', 'close');
    let drained = 0;
    let done = false;
    const finish = () => {
        if (done)
            return;
        done = true;
        clearTimeout(timer);
        req.off('data', onData);
        req.off('end', finish);
        req.off('error', finish);
        req.off('close', finish);
        if (!res.writableEnded && !res.destroyed)
            write(req, res, appError);
    };
    const onData = (chunk) => {
        drained += chunk.length;
        if (drained > DRAIN_MAX_BYTES)
            finish();
    };
    const timer = setTimeout(finish, DRAIN_MAX_MS);
    req.on('data', onData);
    req.once('end', finish);
    req.once('error', finish);
    req.once('close', finish);
    req.resume();
}
/** A browser on a web route: it gets a page, never the JSON body. */
function wantsPage(req, res) {
    return res.locals.routeKind === 'page' && req.accepts(['json', 'html']) === 'html';
}
/** Read on the first page error, like the other catalogues, once per process. */
let errorPages;
function write(req, res, appError) {
    (0, security_headers_1.applyAnswerHeaders)(req, res);
    for (const [name, value] of Object.entries(appError.headers))
        res.setHeader(name, value);
    res.status(appError.statusCode);
    if (wantsPage(req, res)) {
        errorPages ??= error_pages_1.ErrorPages.load();
        res.vary('Cookie');
        res.vary('Accept-Language');
        res.type('html').send(errorPages.render(req, appError));
        return;
    }
    res.json(appError.toBody());
}
//# sourceMappingURL=send-error.js.map
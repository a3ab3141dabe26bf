"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.bodyGuard = bodyGuard;
const common_1 = require("@vanish/common");
/**
 * DECISIONS 4 at the door: a request body is at most 128 KiB counted on the wire (also when it
 * is chunked and announces no length), and it is not compressed (a gzip bomb of a few KiB could
 * inflate to gigabytes in a service behind us). Allowed bodies are buffered here (bounded by the
 * limit) and re-sent to the upstream with an exact Content-Length, so the upstream sees the very
 * bytes the client sent and never has to cope with a slow or endless chunked upload.
 *
 * Compressed bodies answer 400 INVALID_CONTENT_TYPE (the client may resend the same JSON
 * uncompressed; PAYLOAD_TOO_LARGE would wrongly suggest that a smaller body helps).
 */
function bodyGuard(limitBytes = common_1.MAX_JSON_BYTES) {
    return (req, res, next) => {
        const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
        const declared = req.headers['content-length'];
        const chunked = req.headers['transfer-encoding'] !== undefined;
        const hasBody = chunked || (declared !== undefined && declared !== '0');
        if (encoding !== 'identity' && encoding !== '') {
            next(new common_1.ValidationError('INVALID_CONTENT_TYPE', 'Compressed request bodies are not accepted (Content-Encoding must be identity)', { parameter: null }));
            return;
        }
        // A client asking to wait for "100 Continue" gets it from Node; the upstream gets a plain body.
        if (req.headers.expect !== undefined)
            delete req.headers.expect;
        if (!hasBody) {
            next();
            return;
        }
        if (declared !== undefined && Number(declared) > limitBytes) {
            next(tooLarge(limitBytes));
            return;
        }
        const chunks = [];
        let received = 0;
        let settled = false;
        const settle = (err) => {
            if (settled)
                return;
            settled = true;
            req.off('data', onData);
            req.off('end', onEnd);
            req.off('error', onError);
            req.off('close', onClose);
            if (err) {
                chunks.length = 0;
                next(err);
                return;
            }
            const body = Buffer.concat(chunks, received);
            res.locals.body = body;
            req.headers['content-length'] = String(body.length);
            delete req.headers['transfer-encoding'];
            next();
        };
        const onData = (chunk) => {
            received += chunk.length;
            if (received > limitBytes) {
                settle(tooLarge(limitBytes));
                return;
            }
            chunks.push(chunk);
        };
        const onEnd = () => settle();
        const onError = () => settle(new common_1.ValidationError('INVALID_JSON', 'Request body could not be read'));
        const onClose = () => {
            if (!req.complete)
                onError();
        };
        req.on('data', onData);
        req.once('end', onEnd);
        req.once('error', onError);
        req.once('close', onClose);
    };
}
function tooLarge(limitBytes) {
    return new common_1.ValidationError('PAYLOAD_TOO_LARGE', `Request body exceeds ${limitBytes / 1024} KiB`, { parameter: null });
}
//# sourceMappingURL=body-guard.js.map
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.CertificateReloader = void 0;
exports.readCertificatePair = readCertificatePair;
exports.parseCertificatePair = parseCertificatePair;
const node_crypto_1 = require("node:crypto");
const node_fs_1 = require("node:fs");
const node_path_1 = require("node:path");
const node_tls_1 = require("node:tls");
const common_1 = require("@vanish/common");
/**
 * Reads TLS_CERT_FILE and TLS_KEY_FILE and refuses a pair that does not parse or whose key is not
 * the certificate's; `profile` also builds the TLS context once, so whatever OpenSSL would refuse
 * later (a key type the profile cannot use) is refused here.
 */
function readCertificatePair(certFile, keyFile, profile) {
    return parseCertificatePair((0, node_fs_1.readFileSync)(certFile), (0, node_fs_1.readFileSync)(keyFile), { certFile, keyFile }, profile);
}
function parseCertificatePair(cert, key, { certFile, keyFile }, profile) {
    let leaf;
    try {
        leaf = new node_crypto_1.X509Certificate(cert);
    }
    catch (err) {
        throw new Error(`${certFile} holds no PEM certificate (${err.message})`);
    }
    let privateKey;
    try {
        privateKey = (0, node_crypto_1.createPrivateKey)(key);
    }
    catch (err) {
        throw new Error(`${keyFile} holds no private key (${err.message})`);
    }
    if (!leaf.checkPrivateKey(privateKey))
        throw new Error(`${keyFile} is not the key of the certificate in ${certFile}`);
    if (profile)
        (0, node_tls_1.createSecureContext)({ ...profile, cert, key });
    return { cert, key, notAfter: new Date(leaf.validTo), fingerprint: leaf.fingerprint256, subject: leaf.subject.replace(/\n/g, ', ') };
}
/**
 * Live certificate renewal for the gateway's own TLS listener. Watches the directories of
 * TLS_CERT_FILE and TLS_KEY_FILE (a Kubernetes Secret volume renews by writing a new timestamped
 * directory and renaming the `..data` symlink over the old one, so the files' own inodes never
 * change: only a watch on the directory sees it), polls as a safety net, and reloads on SIGHUP.
 * A new pair is swapped in with setSecureContext only when both files parse and the key matches;
 * otherwise the old pair keeps serving, an error is logged and gateway_tls_reload_failures_total
 * counts it. Connections already open keep the context they were made with.
 */
class CertificateReloader {
    options;
    current;
    lastFailedDigest;
    watchers = [];
    settleTimer;
    pollTimer;
    reloads;
    failures;
    onSighup = () => {
        this.options.logger.info('SIGHUP: reloading the TLS certificate');
        this.reload({ force: true });
    };
    constructor(options) {
        this.options = options;
        this.current = options.initial;
        const reloader = this;
        new common_1.Gauge({
            name: 'gateway_tls_certificate_expiry_seconds',
            help: 'Seconds until the certificate the gateway presents expires (negative once it has)',
            registers: [options.registry],
            collect() {
                this.set(Math.round((reloader.current.notAfter.getTime() - Date.now()) / 1000));
            },
        });
        this.reloads = new common_1.Counter({
            name: 'gateway_tls_reloads_total',
            help: 'Renewed certificate pairs swapped into the TLS listener',
            registers: [options.registry],
        });
        this.failures = new common_1.Counter({
            name: 'gateway_tls_reload_failures_total',
            help: 'Changed certificate files that did not parse or match, so the previous pair kept serving',
            registers: [options.registry],
        });
    }
    /** The pair new connections are presented. */
    get presented() {
        return this.current;
    }
    start() {
        const { certFile, keyFile, logger } = this.options;
        const watched = new Map();
        for (const file of [certFile, keyFile]) {
            const names = watched.get((0, node_path_1.dirname)(file)) ?? new Set();
            names.add((0, node_path_1.basename)(file));
            watched.set((0, node_path_1.dirname)(file), names);
        }
        for (const dir of watched.keys()) {
            try {
                const watcher = (0, node_fs_1.watch)(dir, { persistent: false }, () => this.scheduleReload());
                watcher.on('error', (err) => logger.warn('TLS certificate directory watch failed; polling continues', { dir, err: err.message }));
                this.watchers.push(watcher);
            }
            catch (err) {
                logger.warn('cannot watch the TLS certificate directory; polling only', { dir, err: err.message });
            }
        }
        const pollMs = this.options.pollIntervalMs ?? 60_000;
        if (pollMs > 0) {
            this.pollTimer = setInterval(() => this.reload(), pollMs);
            this.pollTimer.unref();
        }
        if (this.options.onSighup !== false)
            process.on('SIGHUP', this.onSighup);
    }
    stop() {
        for (const watcher of this.watchers.splice(0))
            watcher.close();
        if (this.settleTimer)
            clearTimeout(this.settleTimer);
        if (this.pollTimer)
            clearInterval(this.pollTimer);
        process.off('SIGHUP', this.onSighup);
    }
    /**
     * Reads the files and swaps the pair in when it changed, parses and matches. An unchanged
     * broken pair is reported once, not at every poll; `force` (SIGHUP) reports it again.
     */
    reload({ force = false } = {}) {
        const { certFile, keyFile, profile, target, logger } = this.options;
        let cert;
        let key;
        try {
            cert = (0, node_fs_1.readFileSync)(certFile);
            key = (0, node_fs_1.readFileSync)(keyFile);
        }
        catch (err) {
            const reason = `cannot read (${err.message})`;
            return this.fail(reason, `unreadable ${reason}`, force);
        }
        if (cert.equals(this.current.cert) && key.equals(this.current.key))
            return 'unchanged';
        const digest = (0, node_crypto_1.createHash)('sha256').update(cert).update('\0').update(key).digest('hex');
        if (!force && digest === this.lastFailedDigest)
            return 'failed';
        let pair;
        try {
            pair = parseCertificatePair(cert, key, { certFile, keyFile }, profile);
            target.setSecureContext({ ...profile, cert: pair.cert, key: pair.key });
        }
        catch (err) {
            return this.fail(err.message, digest, force);
        }
        const previous = this.current;
        this.current = pair;
        this.lastFailedDigest = undefined;
        this.reloads.inc();
        logger.info('TLS certificate renewed', {
            subject: pair.subject, fingerprint: pair.fingerprint, notAfter: pair.notAfter.toISOString(),
            previousFingerprint: previous.fingerprint, previousNotAfter: previous.notAfter.toISOString(),
        });
        return 'renewed';
    }
    fail(reason, digest, force) {
        if (digest === this.lastFailedDigest && !force)
            return 'failed';
        this.lastFailedDigest = digest;
        this.failures.inc();
        this.options.logger.error('TLS certificate not renewed: the previous pair keeps serving', {
            reason, certFile: this.options.certFile, keyFile: this.options.keyFile,
            servingFingerprint: this.current.fingerprint, servingNotAfter: this.current.notAfter.toISOString(),
        });
        return 'failed';
    }
    scheduleReload() {
        if (this.settleTimer)
            clearTimeout(this.settleTimer);
        this.settleTimer = setTimeout(() => {
            this.settleTimer = undefined;
            this.reload();
        }, this.options.settleMs ?? 250);
        this.settleTimer.unref();
    }
}
exports.CertificateReloader = CertificateReloader;
//# sourceMappingURL=certificate-reloader.js.map
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.TLS_PROFILES = void 0;
exports.tlsProfileOptions = tlsProfileOptions;
exports.TLS_PROFILES = ['intermediate', 'modern'];
/** TLS 1.3's suites are all AEAD with ephemeral key exchange; Node offers these three. */
const TLS13_SUITES = ['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256'];
/**
 * TLS 1.2 suites of Mozilla's "intermediate" server-side guidance, ECDHE only: forward secrecy
 * (no static-RSA key exchange, whose stolen key decrypts every recorded session) and AEAD only
 * (no CBC: LUCKY13 and the padding-oracle family have nothing to work on).
 */
const TLS12_ECDHE_AEAD = [
    'ECDHE-ECDSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384', 'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305', 'ECDHE-RSA-CHACHA20-POLY1305',
];
/**
 * TLS_PROFILE: `intermediate` (default) takes TLS 1.2 and 1.3 with the suites above, which every
 * browser and client of the last decade speaks; `modern` takes TLS 1.3 only, shutting out clients
 * without it (Android before 10, Java before 11, OpenSSL before 1.1.1). Both prefer the server's
 * order and offer X25519 then P-256 for the key exchange.
 */
function tlsProfileOptions(profile) {
    const common = { maxVersion: 'TLSv1.3', honorCipherOrder: true, ecdhCurve: 'X25519:prime256v1' };
    if (profile === 'modern')
        return { ...common, minVersion: 'TLSv1.3', ciphers: TLS13_SUITES.join(':') };
    return { ...common, minVersion: 'TLSv1.2', ciphers: [...TLS13_SUITES, ...TLS12_ECDHE_AEAD].join(':') };
}
//# sourceMappingURL=tls-profile.js.map
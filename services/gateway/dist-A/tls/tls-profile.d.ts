import type { SecureVersion } from 'node:tls';
export declare const TLS_PROFILES: readonly ["intermediate", "modern"];
export type TlsProfileName = (typeof TLS_PROFILES)[number];
/** The Node TLS options a profile sets on the gateway's own listener (and on every renewed context). */
export interface TlsProfileOptions {
    minVersion: SecureVersion;
    maxVersion: SecureVersion;
    /** OpenSSL cipher string: the TLS 1.2 suites and the TLS 1.3 suites together (Node splits them). */
    ciphers: string;
    honorCipherOrder: boolean;
    ecdhCurve: string;
}
/**
 * TLS_PROFILE: `intermediate` (default) takes TLS 1.2 and 1.3 with the suites above, which every
 * browser and client of the last decade speaks; `modern` takes TLS 1.3 only, shutting out clients
 * without it (Android before 10, Java before 11, OpenSSL before 1.1.1). Both prefer the server's
 * order and offer X25519 then P-256 for the key exchange.
 */
export declare function tlsProfileOptions(profile: TlsProfileName): TlsProfileOptions;

import { type SecureContextOptions } from 'node:tls';
import { type Logger, type Registry } from '@vanish/common';
import type { TlsProfileOptions } from './tls-profile';
/** A certificate and its key, read from their files, parsed, and known to belong together. */
export interface CertificatePair {
    cert: Buffer;
    key: Buffer;
    notAfter: Date;
    /** SHA-256 of the leaf certificate (DER), as `openssl x509 -fingerprint -sha256` prints it. */
    fingerprint: string;
    subject: string;
}
/**
 * Reads TLS_CERT_FILE and TLS_KEY_FILE and refuses a pair that does not parse or whose key is not
 * the certificate's; `profile` also builds the TLS context once, so whatever OpenSSL would refuse
 * later (a key type the profile cannot use) is refused here.
 */
export declare function readCertificatePair(certFile: string, keyFile: string, profile?: TlsProfileOptions): CertificatePair;
export declare function parseCertificatePair(cert: Buffer, key: Buffer, { certFile, keyFile }: {
    certFile: string;
    keyFile: string;
}, profile?: TlsProfileOptions): CertificatePair;
/** What the reloader swaps contexts on: a node:https / node:tls server. */
export interface SecureContextTarget {
    setSecureContext(options: SecureContextOptions): void;
}
export interface CertificateReloaderOptions {
    certFile: string;
    keyFile: string;
    profile: TlsProfileOptions;
    /** The pair the server was started with. */
    initial: CertificatePair;
    target: SecureContextTarget;
    logger: Logger;
    registry: Registry;
    /** Events of one renewal (two files, a symlink swap) come in bursts; they are read once, after this quiet time. */
    settleMs?: number;
    /** A safety net for file systems whose change events do not arrive (some network mounts). */
    pollIntervalMs?: number;
    /** Reload on SIGHUP too (the process-wide signal; off for servers that are not the process's own). */
    onSighup?: boolean;
}
export type ReloadOutcome = 'renewed' | 'unchanged' | 'failed';
/**
 * Live certificate renewal for the gateway's own TLS listener. Watches the directories of
 * TLS_CERT_FILE and TLS_KEY_FILE (a Kubernetes Secret volume renews by writing a new timestamped
 * directory and renaming the `..data` symlink over the old one, so the files' own inodes never
 * change: only a watch on the directory sees it), polls as a safety net, and reloads on SIGHUP.
 * A new pair is swapped in with setSecureContext only when both files parse and the key matches;
 * otherwise the old pair keeps serving, an error is logged and gateway_tls_reload_failures_total
 * counts it. Connections already open keep the context they were made with.
 */
export declare class CertificateReloader {
    private readonly options;
    private current;
    private lastFailedDigest;
    private readonly watchers;
    private settleTimer;
    private pollTimer;
    private readonly reloads;
    private readonly failures;
    private readonly onSighup;
    constructor(options: CertificateReloaderOptions);
    /** The pair new connections are presented. */
    get presented(): CertificatePair;
    start(): void;
    stop(): void;
    /**
     * Reads the files and swaps the pair in when it changed, parses and matches. An unchanged
     * broken pair is reported once, not at every poll; `force` (SIGHUP) reports it again.
     */
    reload({ force }?: {
        force?: boolean | undefined;
    }): ReloadOutcome;
    private fail;
    private scheduleReload;
}

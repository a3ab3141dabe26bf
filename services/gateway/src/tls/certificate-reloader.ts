import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';
import { Counter, Gauge, type Logger, type Registry } from '@vanish/common';
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
export function readCertificatePair(certFile: string, keyFile: string, profile?: TlsProfileOptions): CertificatePair {
  return parseCertificatePair(readFileSync(certFile), readFileSync(keyFile), { certFile, keyFile }, profile);
}

export function parseCertificatePair(
  cert: Buffer, key: Buffer, { certFile, keyFile }: { certFile: string; keyFile: string }, profile?: TlsProfileOptions,
): CertificatePair {
  let leaf: X509Certificate;
  try {
    leaf = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`${certFile} holds no PEM certificate (${(err as Error).message})`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new Error(`${keyFile} holds no private key (${(err as Error).message})`);
  }
  if (!leaf.checkPrivateKey(privateKey)) throw new Error(`${keyFile} is not the key of the certificate in ${certFile}`);
  if (profile) createSecureContext({ ...profile, cert, key });
  return { cert, key, notAfter: new Date(leaf.validTo), fingerprint: leaf.fingerprint256, subject: leaf.subject.replace(/\n/g, ', ') };
}

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
export class CertificateReloader {
  private current: CertificatePair;
  private lastFailedDigest: string | undefined;
  private readonly watchers: FSWatcher[] = [];
  private settleTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private readonly reloads: Counter;
  private readonly failures: Counter;
  private readonly onSighup = (): void => {
    this.options.logger.info('SIGHUP: reloading the TLS certificate');
    this.reload({ force: true });
  };

  constructor(private readonly options: CertificateReloaderOptions) {
    this.current = options.initial;
    const reloader = this;
    new Gauge({
      name: 'gateway_tls_certificate_expiry_seconds',
      help: 'Seconds until the certificate the gateway presents expires (negative once it has)',
      registers: [options.registry],
      collect() {
        this.set(Math.round((reloader.current.notAfter.getTime() - Date.now()) / 1000));
      },
    });
    this.reloads = new Counter({
      name: 'gateway_tls_reloads_total',
      help: 'Renewed certificate pairs swapped into the TLS listener',
      registers: [options.registry],
    });
    this.failures = new Counter({
      name: 'gateway_tls_reload_failures_total',
      help: 'Changed certificate files that did not parse or match, so the previous pair kept serving',
      registers: [options.registry],
    });
  }

  /** The pair new connections are presented. */
  get presented(): CertificatePair {
    return this.current;
  }

  start(): void {
    const { certFile, keyFile, logger } = this.options;
    const watched = new Map<string, Set<string>>();
    for (const file of [certFile, keyFile]) {
      const names = watched.get(dirname(file)) ?? new Set<string>();
      names.add(basename(file));
      watched.set(dirname(file), names);
    }
    for (const dir of watched.keys()) {
      try {
        const watcher = watch(dir, { persistent: false }, () => this.scheduleReload());
        watcher.on('error', (err) => logger.warn('TLS certificate directory watch failed; polling continues', { dir, err: err.message }));
        this.watchers.push(watcher);
      } catch (err) {
        logger.warn('cannot watch the TLS certificate directory; polling only', { dir, err: (err as Error).message });
      }
    }
    const pollMs = this.options.pollIntervalMs ?? 60_000;
    if (pollMs > 0) {
      this.pollTimer = setInterval(() => this.reload(), pollMs);
      this.pollTimer.unref();
    }
    if (this.options.onSighup !== false) process.on('SIGHUP', this.onSighup);
  }

  stop(): void {
    for (const watcher of this.watchers.splice(0)) watcher.close();
    if (this.settleTimer) clearTimeout(this.settleTimer);
    if (this.pollTimer) clearInterval(this.pollTimer);
    process.off('SIGHUP', this.onSighup);
  }

  /**
   * Reads the files and swaps the pair in when it changed, parses and matches. An unchanged
   * broken pair is reported once, not at every poll; `force` (SIGHUP) reports it again.
   */
  reload({ force = false } = {}): ReloadOutcome {
    const { certFile, keyFile, profile, target, logger } = this.options;
    let cert: Buffer;
    let key: Buffer;
    try {
      cert = readFileSync(certFile);
      key = readFileSync(keyFile);
    } catch (err) {
      const reason = `cannot read (${(err as Error).message})`;
      return this.fail(reason, `unreadable ${reason}`, force);
    }
    if (cert.equals(this.current.cert) && key.equals(this.current.key)) return 'unchanged';
    const digest = createHash('sha256').update(cert).update('\0').update(key).digest('hex');
    if (!force && digest === this.lastFailedDigest) return 'failed';
    let pair: CertificatePair;
    try {
      pair = parseCertificatePair(cert, key, { certFile, keyFile }, profile);
      target.setSecureContext({ ...profile, cert: pair.cert, key: pair.key });
    } catch (err) {
      return this.fail((err as Error).message, digest, force);
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

  private fail(reason: string, digest: string, force: boolean): ReloadOutcome {
    if (digest === this.lastFailedDigest && !force) return 'failed';
    this.lastFailedDigest = digest;
    this.failures.inc();
    this.options.logger.error('TLS certificate not renewed: the previous pair keeps serving', {
      reason, certFile: this.options.certFile, keyFile: this.options.keyFile,
      servingFingerprint: this.current.fingerprint, servingNotAfter: this.current.notAfter.toISOString(),
    });
    return 'failed';
  }

  private scheduleReload(): void {
    if (this.settleTimer) clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      this.reload();
    }, this.options.settleMs ?? 250);
    this.settleTimer.unref();
  }
}

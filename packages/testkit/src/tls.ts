import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

/** A throwaway certificate authority in a temp directory, made with the openssl CLI. */
export interface TestCertificateAuthority {
  readonly dir: string;
  /** The CA certificate (PEM) and its file: what a client is told to trust. */
  readonly caFile: string;
  readonly ca: string;
  /** A server certificate signed by this CA for these names (DNS names and IP addresses). */
  issue(name: string, altNames: { dns?: string[]; ip?: string[] }): IssuedCertificate;
  /** Deletes the directory (keys included). */
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * Creates a CA valid for two days (RSA 2048: every server here reads it). Tests make two: the one
 * that signs the server, and another one a client trusts by mistake, which must be refused.
 */
export function createTestCa(label = 'vanish test CA'): TestCertificateAuthority {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-ca-'));
  openssl([
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=${label}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ], dir);
  let serial = 0;
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    ca: readFileSync(join(dir, 'ca.pem'), 'utf8'),
    issue(name, altNames) {
      serial += 1;
      const base = `server-${serial}`;
      const sans = [...(altNames.dns ?? []).map((dns) => `DNS:${dns}`), ...(altNames.ip ?? []).map((ip) => `IP:${ip}`)];
      writeFileSync(join(dir, `${base}.ext`), [
        'basicConstraints=CA:FALSE',
        'keyUsage=critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage=serverAuth',
        ...(sans.length > 0 ? [`subjectAltName=${sans.join(',')}`] : []),
      ].join('\n'));
      openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${name}`], dir);
      openssl([
        'x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', String(1000 + serial),
        '-out', `${base}.pem`, '-days', '2', '-extfile', `${base}.ext`,
      ], dir);
      return {
        certFile: join(dir, `${base}.pem`),
        keyFile: join(dir, `${base}.key`),
        cert: readFileSync(join(dir, `${base}.pem`), 'utf8'),
        key: readFileSync(join(dir, `${base}.key`), 'utf8'),
      };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

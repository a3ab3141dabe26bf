import { isIP } from 'node:net';

/**
 * How an SMTP_URL protects the connection: `smtps://` is TLS from the first byte; `smtp://` with
 * `?starttls=required` upgrades with STARTTLS or refuses to send (nodemailer `requireTLS`);
 * plain `smtp://` upgrades only when the server offers STARTTLS, which a path attacker can strip,
 * and `?starttls=never` never does.
 */
export type SmtpTlsMode = 'tls' | 'starttls-required' | 'starttls-opportunistic' | 'none';

export function smtpTlsMode(url: string): SmtpTlsMode {
  const parsed = new URL(url);
  if (parsed.protocol === 'smtps:') return 'tls';
  const starttls = parsed.searchParams.get('starttls') ?? 'auto';
  if (starttls === 'required') return 'starttls-required';
  return starttls === 'never' ? 'none' : 'starttls-opportunistic';
}

/** Why a path attacker could read or change this SMTP traffic, or undefined when TLS is certain. */
export function smtpTransportRisk(url: string): string | undefined {
  switch (smtpTlsMode(url)) {
    case 'starttls-opportunistic':
      return 'smtp:// uses STARTTLS only when offered, which a path attacker can strip (use smtps:// or smtp://…?starttls=required)';
    case 'none':
      return 'smtp:// with starttls=never is plaintext (use smtps:// or smtp://…?starttls=required)';
    default:
      return undefined;
  }
}

/**
 * tls.connect options for nodemailer: the server is verified (Node's default) against `ca` when
 * given. The server name is sent only for host names (an IP address is not a valid SNI name).
 */
export function smtpTlsOptions(url: string, ca: string | Buffer | undefined): { servername?: string; ca?: string | Buffer } {
  const host = new URL(url).hostname;
  return { ...(isIP(host) === 0 ? { servername: host } : {}), ...(ca !== undefined ? { ca } : {}) };
}

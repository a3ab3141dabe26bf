import { readTlsCa, refuseInsecureTransportInProduction, type EnvReader } from '@vanish/common';

export interface AmqpTlsSettings {
  /** CA bundle (PEM) the broker's certificate must chain to (AMQP_TLS_CA_FILE); unset: Node's public roots. */
  ca?: string | Buffer;
}

/**
 * The socket options amqplib passes to tls.connect for an `amqps://` URL: the broker is verified
 * against `ca` and must name the host we dialled (amqplib sets the server name from the URL).
 * Empty for `amqp://`.
 */
export function amqpSocketOptions(url: string, tls: AmqpTlsSettings | undefined): { ca?: string | Buffer; rejectUnauthorized?: boolean } {
  if (!/^amqps:/i.test(url)) return {};
  return { ...(tls?.ca !== undefined ? { ca: tls.ca } : {}), rejectUnauthorized: true };
}

/** Why a path attacker could read or change this broker traffic, or undefined for amqps://. */
export function amqpTransportRisk(url: string): string | undefined {
  return url.split(',').every((one) => /^amqps:/i.test(one.trim())) ? undefined : 'amqp:// is plaintext (use amqps://, with AMQP_TLS_CA_FILE for a private CA)';
}

/**
 * AMQP_TLS_CA / AMQP_TLS_CA_FILE for an AMQP_URL, read the same way by every service; with
 * NODE_ENV=production an `amqp://` URL is refused unless AMQP_ALLOW_PLAINTEXT=true.
 */
export function readAmqpTls(reader: EnvReader, amqpUrl: string | undefined): AmqpTlsSettings | undefined {
  const ca = readTlsCa(reader, 'AMQP_TLS_CA');
  if (amqpUrl === undefined) return undefined;
  refuseInsecureTransportInProduction(reader, { variable: 'AMQP_URL', risk: amqpTransportRisk(amqpUrl), optOut: 'AMQP_ALLOW_PLAINTEXT' });
  return ca !== undefined ? { ca } : {};
}

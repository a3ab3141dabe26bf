import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * What notes and the webhooks service share about webhooks (DECISIONS 11): the target policy (which
 * URLs and addresses may be called) and the sealed part of a note event that only the webhooks
 * service opens (DECISIONS 1).
 */

/** DECISIONS 11: a webhook URL is at most this long. */
export const WEBHOOK_URL_MAX_LENGTH = 2_048;

/** Purpose label of payloads sealed to the webhooks service (ConsumerSealer). */
export const WEBHOOK_SEAL_PURPOSE = 'vanish.webhook-event.v1';
/** Purpose label of a note's webhook target (URL and signing secret) as notes stores it. */
export const WEBHOOK_TARGET_SEAL_PURPOSE = 'vanish.webhook-target.v1';

/** The SPEC 6 kinds a webhook receives, and DECISIONS 16's `note.released`; `note.created` is internal only. */
export const WEBHOOK_EVENT_NAMES = ['note.accessed', 'note.failed_access', 'note.expired', 'note.destroyed', 'note.released'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];
/**
 * DECISIONS 15: a submission arrived in a request's inbox. Sent to the request's own webhook only (operator
 * subscriptions receive note events), with the request's reference, never an id that opens anything.
 */
export const REQUEST_SUBMITTED_EVENT = 'request.submitted';

export interface AccessDetails {
  /** The client address as the gateway determined it. */
  ip_address: string;
  user_agent: string;
  /** ISO 8601 UTC. */
  access_time: string;
}

/** A note's webhook as stored (sealed to the webhooks service): never in clear outside it. */
export interface WebhookTarget {
  url: string;
  /** Standard Webhooks form: `whsec_` + base64 of the key. */
  secret: string;
}

/**
 * The part of a note event only the webhooks service may read (`envelope.webhook`, sealed with
 * WEBHOOK_SEAL_PURPOSE): the uuid when a request holding the link caused the event, the access
 * details of that request, and the note's stored target (itself sealed with WEBHOOK_TARGET_SEAL_PURPOSE).
 */
export interface SealedWebhookPart {
  note_id: string | null;
  access_details: AccessDetails | null;
  target: string | null;
}

/**
 * ipaddr.js's names of the IPv6 ranges that carry an IPv4 address: allowed only when that address is
 * itself public (a DNS64 resolver on an IPv6-only host answers 64:ff9b::8.8.8.8 for a public server).
 */
const EMBEDDING_RANGES = new Set(['ipv4Mapped', 'rfc6145', 'rfc6052', '6to4', 'teredo']);

/**
 * True when a connection to `address` must never be made for a webhook: loopback, private,
 * link-local (cloud metadata 169.254.169.254 included), unique-local (fd00:ec2::254 included),
 * CGNAT, multicast, unspecified, broadcast, reserved, documentation; the deprecated IPv4-compatible
 * range ::/96 and the local-use NAT64 prefix 64:ff9b:1::/48 whatever they carry; and every IPv6 form
 * that embeds an IPv4 address (mapped, translated, NAT64, 6to4, Teredo, ISATAP) unless each IPv4
 * address it embeds is itself public. ipaddr.js names the ranges; the embedded addresses are read
 * from the 16 bytes at the offsets the RFCs give.
 */
export function isForbiddenAddress(address: string): boolean {
  const bare = canonicalAddress(address.replace(/^\[|\]$/g, ''));
  if (bare === null || !ipaddr.isValid(bare)) return true;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return !isPublicIpv4(parsed as ipaddr.IPv4);
  const v6 = parsed as ipaddr.IPv6;
  const bytes = v6.toByteArray();
  // ::/96, IPv4-compatible (RFC 4291 2.5.5.1, deprecated): nothing legitimate is reached this way any more,
  // and some stacks still hand such an address to IPv4 (`[::127.0.0.1]`). :: and ::1 are in it too.
  if (bytes.slice(0, 12).every((byte) => byte === 0)) return true;
  // 64:ff9b:1::/48, local-use NAT64 (RFC 8215): translates into the operator's own networks.
  if (startsWith(bytes, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01])) return true;
  const range = v6.range();
  if (range !== 'unicast' && !EMBEDDING_RANGES.has(range)) return true;
  return embeddedIpv4(range, bytes).some((embedded) => !isPublicIpv4(embedded));
}

/**
 * IPv6 in the all-hex form of the WHATWG URL parser (the one that read the webhook URL), IPv4 as it is;
 * null when it is neither. ipaddr.js 2.5 reads the dotted form `::a.b.c.d` as `::ffff:a.b.c.d` (mapped, not
 * the IPv4-compatible address it is), and getaddrinfo writes IPv4-compatible answers in that dotted form.
 */
function canonicalAddress(address: string): string | null {
  const family = isIP(address);
  if (family === 4) return address;
  if (family !== 6) return null;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null; // a zone id (fe80::1%eth0): link-local, refused anyway
  }
}

function isPublicIpv4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

function startsWith(bytes: readonly number[], prefix: readonly number[]): boolean {
  return prefix.every((byte, i) => bytes[i] === byte);
}

const ipv4At = (bytes: readonly number[], offset: number, invert = false): ipaddr.IPv4 =>
  new ipaddr.IPv4(bytes.slice(offset, offset + 4).map((byte) => (invert ? byte ^ 0xff : byte)));

/** Every IPv4 address an IPv6 address carries, by the form its range or interface id says it has. */
function embeddedIpv4(range: string, bytes: readonly number[]): ipaddr.IPv4[] {
  const found: ipaddr.IPv4[] = [];
  switch (range) {
    case 'ipv4Mapped': // ::ffff:a.b.c.d (RFC 4291)
    case 'rfc6145': // ::ffff:0:a.b.c.d, IPv4-translated (RFC 6145)
    case 'rfc6052': // 64:ff9b::a.b.c.d, well-known NAT64 (RFC 6052)
      found.push(ipv4At(bytes, 12));
      break;
    case '6to4': // 2002:AABB:CCDD::/48 (RFC 3056)
      found.push(ipv4At(bytes, 2));
      break;
    case 'teredo': // 2001:0:SERVER:flags:port:CLIENT, the client's address bit-inverted (RFC 4380)
      found.push(ipv4At(bytes, 4), ipv4At(bytes, 12, true));
      break;
    default:
      break;
  }
  // ISATAP (RFC 5214) in any prefix: interface id 0000:5efe or 0200:5efe (the u and g bits may be set) + IPv4.
  if ((bytes[8]! & 0xfc) === 0 && bytes[9] === 0 && bytes[10] === 0x5e && bytes[11] === 0xfe) found.push(ipv4At(bytes, 12));
  return found;
}

export type WebhookUrlProblem = { ok: true; url: URL } | { ok: false; reason: string };

/**
 * The syntax half of the registration check (the address half needs DNS: see checkWebhookTarget).
 * `https` only when `requireHttps`; no credentials in the URL; a host is required.
 */
export function parseWebhookUrl(value: string, options: { requireHttps: boolean }): WebhookUrlProblem {
  if (value.length > WEBHOOK_URL_MAX_LENGTH) return { ok: false, reason: `webhook_url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { ok: false, reason: 'webhook_url must be an absolute http(s) URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'webhook_url must be an http(s) URL' };
  if (options.requireHttps && url.protocol !== 'https:') return { ok: false, reason: 'webhook_url must use https' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'webhook_url must not carry credentials' };
  if (url.hostname === '') return { ok: false, reason: 'webhook_url must name a host' };
  return { ok: true, url };
}

/** The host of a parsed URL as a resolver or isIP wants it (IPv6 literals without brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Resolves a host name to every address it has (node:dns lookup with `all`). */
export type ResolveHost = (host: string) => Promise<string[]>;

/**
 * The address half of the check: the literal address, or every address the name resolves to, must
 * be public. Returns a reason when refused. `allowPrivate` (WEBHOOK_ALLOW_PRIVATE_NETWORKS, never in
 * production) skips it for tests and laptops.
 */
export async function checkWebhookAddresses(url: URL, resolveHost: ResolveHost, allowPrivate: boolean): Promise<string | null> {
  if (allowPrivate) return null;
  const host = hostOf(url);
  const addresses = isIP(host) ? [host] : await resolveHost(host).catch(() => null);
  if (addresses === null || addresses.length === 0) return 'webhook_url names a host that does not resolve';
  if (addresses.some(isForbiddenAddress)) return 'webhook_url must resolve to public addresses only (no loopback, private, link-local or metadata addresses)';
  return null;
}

/** The system resolver (getaddrinfo, as connections use): every address of `host`. */
export const resolveAllAddresses: ResolveHost = async (host) => {
  const { lookup } = await import('node:dns/promises');
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
};

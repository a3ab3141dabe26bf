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

/** The SPEC 6 kinds a webhook receives; `note.created` is internal only. */
export const WEBHOOK_EVENT_NAMES = ['note.accessed', 'note.failed_access', 'note.expired', 'note.destroyed'] as const;
export type WebhookEventName = (typeof WEBHOOK_EVENT_NAMES)[number];

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

/** ipaddr.js range names that are public unicast; every other range is refused. */
const PUBLIC_RANGES = new Set(['unicast']);

/**
 * True when a connection to `address` must never be made for a webhook: loopback, private,
 * link-local (cloud metadata 169.254.169.254 included), unique-local (fd00:ec2::254 included),
 * CGNAT, multicast, unspecified, broadcast, reserved, documentation, and IPv6 forms that embed an
 * IPv4 address (mapped, NAT64, 6to4, Teredo) unless the embedded address itself is public.
 */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(bare)) return true;
  let parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return !PUBLIC_RANGES.has(parsed.range());
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

import { KeyRing, publicRingOf } from '@vanish/common';
import { checkApiAnswer } from '@vanish/testkit/openapi';

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed JSON checked against the OpenAPI document
}

/**
 * Calls the public API and checks the answer against the repository's OpenAPI document
 * (every answer, errors included), so an e2e test fails on anything undocumented.
 */
export async function callApi(baseUrl: string, method: 'GET' | 'POST', path: string, json?: unknown): Promise<ApiResponse> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await response.text();
  let body: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text !== '') body = JSON.parse(text);
  checkApiAnswer({ method, path, status: response.status, headers: response.headers, body });
  return { status: response.status, headers: response.headers, body };
}

/** A 32-byte key in the `id:BASE64` key-ring form, or bare base64 for LOOKUP_KEY. */
export function testKey(id?: string): string {
  const material = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) material[i] = (i * 37 + (id?.length ?? 0) * 11) & 0xff;
  return id ? `${id}:${material.toString('base64')}` : material.toString('base64');
}

/** The mailer's mail key pair for tests: the mailer gets the private ring, notes only the public one (DECISIONS 1). */
export function testMailKeys(): { mailer: { MAIL_PRIVATE_KEYS: string }; notes: { MAIL_PUBLIC_KEYS: string } } {
  const privateRing = KeyRing.parse(testKey('m1'));
  return { mailer: { MAIL_PRIVATE_KEYS: privateRing.serialize() }, notes: { MAIL_PUBLIC_KEYS: publicRingOf(privateRing).serialize() } };
}

/** The webhooks service's private ring and its public half for notes (DECISIONS 11). */
export function testWebhookKeys(): { webhooks: { WEBHOOK_PRIVATE_KEYS: string }; notes: { WEBHOOK_PUBLIC_KEYS: string } } {
  const privateRing = KeyRing.parse(testKey('w1'));
  return { webhooks: { WEBHOOK_PRIVATE_KEYS: privateRing.serialize() }, notes: { WEBHOOK_PUBLIC_KEYS: publicRingOf(privateRing).serialize() } };
}

/** Variables a test process must not inherit from the shell or CI that runs it (DECISIONS 10 and friends). */
export const CLEARED_ENV: Record<string, undefined> = Object.fromEntries(
  [
    'NODE_ENV', 'PORT', 'ADMIN_PORT', 'DATA_DIR', 'PUBLIC_BASE_URL', 'DATABASE_URL', 'REDIS_URL', 'AMQP_URL', 'AMQP_EXCHANGE', 'AMQP_QUEUE_PREFIX', 'MAIL_QUEUE',
    'SMTP_URL', 'MAIL_FROM', 'MASTER_KEYS', 'LOOKUP_KEY', 'MAIL_KEYS', 'MASTER_KEYS_FILE', 'LOOKUP_KEY_FILE', 'MAIL_KEYS_FILE',
    'HOST', 'ADMIN_HOST', 'ALLOW_INSECURE_PUBLIC_BASE_URL', 'CORS_ORIGINS', 'TRUST_PROXY', 'REQUIRE_HTTPS', 'TLS_CERT_FILE', 'TLS_KEY_FILE', 'TLS_PROFILE', 'NOTES_URL', 'STATS_URL', 'MAILER_URL',
    'MAIL_PUBLIC_KEYS', 'MAIL_PUBLIC_KEYS_FILE', 'MAIL_PRIVATE_KEYS', 'MAIL_PRIVATE_KEYS_FILE', 'MAIL_DEAD_LETTER_RETENTION_MS',
    'RECEIPT_SIGNING_KEYS', 'RECEIPT_SIGNING_KEYS_FILE',
    'NOTES_DATABASE_URL', 'STATS_DATABASE_URL', 'MAILER_DATABASE_URL', 'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT',
    'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT', 'RATE_LIMIT_CREATE_PER_HOUR', 'RATE_LIMIT_VIEW_PER_HOUR',
    'RATE_LIMIT_STATS_PER_HOUR', 'RATE_LIMIT_KEY_PREFIX',
    'WEBHOOK_PUBLIC_KEYS', 'WEBHOOK_PUBLIC_KEYS_FILE', 'WEBHOOK_PRIVATE_KEYS', 'WEBHOOK_PRIVATE_KEYS_FILE', 'WEBHOOK_SUBSCRIPTIONS',
    'WEBHOOK_SUBSCRIPTIONS_FILE', 'WEBHOOK_ALLOW_PRIVATE_NETWORKS', 'WEBHOOK_QUEUE', 'WEBHOOKS_DATABASE_URL', 'WEBHOOKS_ADMIN_PORT',
  ].map((name) => [name, undefined]),
);

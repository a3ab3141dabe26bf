import { randomBytes } from 'node:crypto';
import {
  ValidationError, WEBHOOK_EVENT_NAMES, checkWebhookAddresses, parseWebhookUrl,
  type AccessDetails, type MessageSealing, type NoteEvent, type OutgoingMessage, type ResolveHost, type SealedWebhookPart,
  type WebhookTarget,
} from '@vanish/common';

/** Who made the request that caused an event (the gateway's view of the client). */
export interface RequestAccess {
  ipAddress: string;
  userAgent: string;
}

/** What an event's sealed webhook part is made of; each piece null when the event has none. */
export interface WebhookContext {
  uuid: string | null;
  access: RequestAccess | null;
  /** The note's stored target (sealed to the webhooks service), or null without a webhook. */
  target: string | null;
}

export interface NoteWebhooksOptions {
  /** `new ConsumerSealer(webhookPublicKeys, WEBHOOK_SEAL_PURPOSE)`: event parts only the webhooks service opens. */
  eventSealer: MessageSealing;
  /** `new ConsumerSealer(webhookPublicKeys, WEBHOOK_TARGET_SEAL_PURPOSE)`: the stored URL and secret. */
  targetSealer: MessageSealing;
  /** NODE_ENV=production: only https targets. */
  requireHttps: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS (tests and laptops; refused in production). */
  allowPrivateNetworks: boolean;
  resolveHost: ResolveHost;
}

const WEBHOOK_KINDS: ReadonlySet<string> = new Set(WEBHOOK_EVENT_NAMES);
const SECRET_BYTES = 32;

/**
 * The notes side of webhooks (DECISIONS 11): checks a webhook URL at registration, makes its
 * signing secret, seals both to the webhooks service, and gives each SPEC 6 event a part sealed to
 * the webhooks service (uuid, access details, target). Notes holds only public keys, so nothing it
 * stores or relays opens any of it (DECISIONS 1).
 */
export class NoteWebhooks {
  constructor(private readonly options: NoteWebhooksOptions) {}

  /** Refuses with INVALID_WEBHOOK_URL, or returns the sealed target to store and the secret shown once. */
  async register(webhookUrl: string): Promise<{ sealedTarget: string; secret: string }> {
    const parsed = parseWebhookUrl(webhookUrl, { requireHttps: this.options.requireHttps });
    if (!parsed.ok) throw invalid(parsed.reason);
    const refused = await checkWebhookAddresses(parsed.url, this.options.resolveHost, this.options.allowPrivateNetworks);
    if (refused) throw invalid(refused);
    const secret = `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
    const target: WebhookTarget = { url: parsed.url.href, secret };
    return { sealedTarget: this.options.targetSealer.seal(JSON.stringify(target)), secret };
  }

  /** The same messages, each SPEC 6 event with `data.note_ref` and its sealed `webhook` part. */
  attach(messages: readonly OutgoingMessage[], context: WebhookContext): OutgoingMessage[] {
    return messages.map((message) => {
      if (!WEBHOOK_KINDS.has(message.routingKey)) return message;
      const envelope = JSON.parse(message.body) as NoteEvent;
      const accessDetails: AccessDetails | null = context.access === null ? null : {
        ip_address: context.access.ipAddress,
        user_agent: context.access.userAgent,
        access_time: envelope.timestamp,
      };
      const part: SealedWebhookPart = { note_id: context.uuid, access_details: accessDetails, target: context.target };
      const withPart: NoteEvent = {
        ...envelope,
        data: { ...envelope.data, note_ref: envelope.data.note_id },
        webhook: this.options.eventSealer.seal(JSON.stringify(part)),
      };
      return { ...message, body: JSON.stringify(withPart) };
    });
  }
}

/** Without the webhooks feature configured: a webhook_url is refused, events stay as they are. */
export function webhooksDisabledError(): ValidationError {
  return invalid('webhooks are not enabled on this server');
}

function invalid(message: string): ValidationError {
  return new ValidationError('INVALID_WEBHOOK_URL', message, { parameter: 'webhook_url' });
}

/**
 * Internal event contract (DECISIONS 7). `data.note_id` is an opaque note reference, never the
 * uuid; nothing here may carry an IP address, an e-mail address or content (DECISIONS 6).
 */
export const EVENT_NAMES = ['note.created', 'note.accessed', 'note.failed_access', 'note.expired', 'note.destroyed', 'note.released'] as const;
export type EventName = (typeof EVENT_NAMES)[number];

export type ExpiryType = 'view' | 'time' | 'both';

export interface EventEnvelope<E extends EventName = EventName, D = NoteEventData> {
  id: string;
  event: E;
  version: 1;
  timestamp: string;
  data: D;
  /**
   * Sealed to the webhooks service (webhooks.ts, SealedWebhookPart): the uuid, access details and the
   * note's webhook target. Only on the webhook kinds (WEBHOOK_EVENT_NAMES); stats and others ignore it (DECISIONS 11).
   */
  webhook?: string;
}

export interface NoteEventData {
  note_id: string;
  expiry_type?: ExpiryType;
  reason?: 'views' | 'lockout' | 'takedown' | 'creator' | 'time' | 'retention';
  was_read?: boolean;
  /** The note's public reference (DECISIONS 11): the same value as note_id, named as webhooks carry it. */
  note_ref?: string;
}

export type NoteEvent = EventEnvelope<EventName, NoteEventData>;

/** Heartbeats feed health_status (DECISIONS 6); they travel on `health.<service>`. */
export interface Heartbeat {
  id: string;
  event: 'service.heartbeat';
  version: 1;
  timestamp: string;
  data: {
    service: 'notes' | 'gateway' | 'stats' | 'mailer';
    instance: string;
    components: Partial<Record<'database' | 'encryption' | 'email', string>>;
  };
}

/** Mail commands travel on `mail.send` sealed to the mailer (consumer-sealing.ts); the broker sees only ciphertext. */
export interface MailCommandEnvelope {
  id: string;
  event: 'mail.send';
  version: 1;
  timestamp: string;
  sealed: string;
}

export type MailCommand =
  /** `key_separately`: the note was sealed on its writer's machine and the link lacks its key (DECISIONS 13). */
  /** `lang`: the language of the page that created the note (a BCP 47 tag such as `de` or `pt-BR`); absent: English. */
  | { kind: 'link'; to: string; link: string; expiry_type: ExpiryType; expires_at: string; max_views: number; created_at: string; key_separately?: true; lang?: string }
  | { kind: 'notification'; to: string; read_at: string; views_left: number; receipt_url?: string; lang?: string }
  /** DECISIONS 15: a submission arrived in a request's inbox (no link: the inbox link holds a key the server never has). */
  | { kind: 'request'; to: string; submitted_at: string; number: number; max_submissions: number; lang?: string };

export const MAIL_SEAL_PURPOSE = 'vanish.mail-command.v1';

export function isNoteEvent(value: unknown): value is NoteEvent {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.id === 'string' && typeof v.timestamp === 'string' && v.version === 1 &&
    (EVENT_NAMES as readonly unknown[]).includes(v.event) &&
    typeof v.data === 'object' && v.data !== null && typeof (v.data as Record<string, unknown>).note_id === 'string';
}

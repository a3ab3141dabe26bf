import { randomUUID } from 'node:crypto';
import {
  type EventName,
  type MailCommand,
  type MailCommandEnvelope,
  type MessageSealing,
  type NoteEvent,
  type NoteEventData,
  type OutgoingMessage,
} from '@vanish/common';

/** Optional hooks (metrics) told about every note event after its transaction committed. */
export interface NoteEventsObserver {
  noteEvent(event: EventName, data: Readonly<Omit<NoteEventData, 'note_id'>>): void;
}

/** A DECISIONS 7 envelope as an outbox message; the routing key is the event name. */
export function noteEventMessage(event: EventName, data: NoteEventData, now: Date): OutgoingMessage {
  const envelope: NoteEvent = { id: randomUUID(), event, version: 1, timestamp: now.toISOString(), data };
  return { id: envelope.id, routingKey: event, body: JSON.stringify(envelope) };
}

/** A mail command sealed to the mailer: the outbox and the broker see only ciphertext that notes cannot open. */
export function mailCommandMessage(sealer: MessageSealing, command: MailCommand, now: Date): OutgoingMessage {
  const envelope: MailCommandEnvelope = {
    id: randomUUID(),
    event: 'mail.send',
    version: 1,
    timestamp: now.toISOString(),
    sealed: sealer.seal(JSON.stringify(command)),
  };
  return { id: envelope.id, routingKey: 'mail.send', body: JSON.stringify(envelope) };
}

/** Tells the observer about the note events among `messages` (mail commands are skipped). */
export function notifyObserver(observer: NoteEventsObserver | undefined, messages: readonly OutgoingMessage[]): void {
  if (!observer) return;
  for (const message of messages) {
    if (message.routingKey === 'mail.send') continue;
    const envelope = JSON.parse(message.body) as NoteEvent;
    const { note_id: _noteId, ...rest } = envelope.data;
    try {
      observer.noteEvent(envelope.event, rest);
    } catch {
      // Metrics must never break a committed note operation.
    }
  }
}

import { NoteNotFoundError, ValidationError, formatTimestamp, type Clock, type Logger, type MessageSealing, type OutgoingMessage } from '@vanish/common';
import { hasLoneSurrogate } from './create-note-validator';
import type { CreateNoteInput, CreatedNote, NoteMetadata, NotesApi, RevealResult } from './notes';
import type { NoteCrypto, SealedNote } from './note-crypto';
import { type NotificationAddress, packNotificationAddress, unpackNotificationAddress } from './notification-address';
import { mailCommandMessage, noteEventMessage, notifyObserver, type NoteEventsObserver } from './note-events';
import type { NoteRecord, NoteStore } from './ports';

/** DECISIONS 3: no note is ever readable more than 100 times; time notes report 100. */
export const TIME_NOTE_MAX_VIEWS = 100;
/** DECISIONS 3: the fifth wrong passcode destroys the note. */
export const MAX_FAILED_ATTEMPTS = 5;
export const DEFAULT_RETENTION_HOURS = 720;

const HOUR_MS = 3_600_000;

export interface NoteServiceOptions {
  store: NoteStore;
  crypto: NoteCrypto;
  /** Seals mail commands to the mailer: `new ConsumerSealer(mailPublicKeys, MAIL_SEAL_PURPOSE)` (DECISIONS 1). */
  mailSealer: MessageSealing;
  clock: Clock;
  /** Origin of shareable links, e.g. `http://localhost:8080` (no trailing slash needed). */
  publicBaseUrl: string;
  /** NOTE_RETENTION_HOURS: how long an unread view note is kept. */
  retentionHours: number;
  logger: Logger;
  events?: NoteEventsObserver;
}

/**
 * The note lifecycle (DECISIONS 1, 3, 7). Every state change and its outbox rows (events and
 * sealed mail commands) commit in one transaction; content leaves only after the commit.
 */
export class NoteService implements NotesApi {
  private readonly store: NoteStore;
  private readonly crypto: NoteCrypto;
  private readonly mailSealer: MessageSealing;
  private readonly clock: Clock;
  private readonly publicBaseUrl: string;
  private readonly retentionMs: number;
  private readonly logger: Logger;
  private readonly events: NoteEventsObserver | undefined;

  constructor(options: NoteServiceOptions) {
    if (!Number.isInteger(options.retentionHours) || options.retentionHours < 1) {
      throw new Error('retentionHours must be a positive integer');
    }
    this.store = options.store;
    this.crypto = options.crypto;
    this.mailSealer = options.mailSealer;
    this.clock = options.clock;
    this.publicBaseUrl = options.publicBaseUrl.replace(/\/+$/, '');
    this.retentionMs = options.retentionHours * HOUR_MS;
    this.logger = options.logger;
    this.events = options.events;
  }

  async create(input: CreateNoteInput): Promise<CreatedNote> {
    // UTF-8 encoding would silently replace a lone surrogate; refuse it instead (the HTTP
    // validator already does; this keeps the domain honest for every other caller).
    if (hasLoneSurrogate(input.content)) throw new ValidationError('INVALID_CONTENT', 'content is not valid Unicode text', { parameter: 'content' });
    if (input.passcode && hasLoneSurrogate(input.passcode)) throw new ValidationError('INVALID_PASSCODE', 'passcode is not valid Unicode text', { parameter: 'passcode' });
    const now = this.clock.now();
    const uuid = this.crypto.newUuid();
    const expiresAt = new Date(now.getTime() + (input.expiryType === 'view' ? this.retentionMs : input.expiryHours * HOUR_MS));
    const maxViews = input.expiryType === 'time' ? TIME_NOTE_MAX_VIEWS : input.maxViews;
    const passcode = input.passcode === '' ? null : input.passcode;
    const keyCheck = input.keyCheck ?? null;
    const sealed = await this.crypto.seal(uuid, { content: input.content, passcode, notificationEmail: packNotificationAddress(input.notificationEmail, input.lang), keyCheck });
    const note: NoteRecord = {
      ...sealed,
      noteRef: this.crypto.newNoteRef(),
      hasPasscode: passcode !== null,
      expiryType: input.expiryType,
      maxViews,
      currentViews: 0,
      failedAttempts: 0,
      createdAt: now,
      expiresAt,
    };
    const url = `${this.publicBaseUrl}/${uuid}`;
    const messages: OutgoingMessage[] = [noteEventMessage('note.created', { note_id: note.noteRef, expiry_type: input.expiryType }, now)];
    if (input.sendLinkEmail) {
      messages.push(mailCommandMessage(this.mailSealer, {
        kind: 'link',
        to: input.sendLinkEmail,
        link: url,
        expiry_type: input.expiryType,
        expires_at: formatTimestamp(expiresAt),
        max_views: maxViews,
        created_at: formatTimestamp(now),
        // DECISIONS 13: the server never had the key, so the mail carries the link without it.
        ...(keyCheck !== null ? { key_separately: true } : {}),
        ...(input.lang && input.lang !== 'en' ? { lang: input.lang } : {}),
      }, now));
    }
    await this.store.insertNew(note, messages);
    notifyObserver(this.events, messages);
    return { uuid, url, expiryType: input.expiryType, expiresAt, maxViews, hasPasscode: note.hasPasscode, createdAt: now };
  }

  async metadata(uuid: string): Promise<NoteMetadata> {
    const note = await this.store.findActive(this.crypto.lookup(uuid), this.clock.now());
    if (!note) throw new NoteNotFoundError();
    return {
      hasPasscode: note.hasPasscode,
      clientEncrypted: Boolean(note.keyCheckBox),
      expiryType: note.expiryType,
      expiresAt: note.expiresAt,
      maxViews: note.maxViews,
      currentViews: note.currentViews,
      createdAt: note.createdAt,
    };
  }

  async reveal(uuid: string, passcode: string | null, keyCheck: string | null = null): Promise<RevealResult> {
    const lookup = this.crypto.lookup(uuid);
    const note = await this.store.findActive(lookup, this.clock.now());
    if (!note) return { outcome: 'not_found' };
    // DECISIONS 13: no view, no passcode work and no lock-out count without proof of the fragment key.
    const clientEncrypted = Boolean(note.keyCheckBox);
    if (clientEncrypted && (keyCheck === null || !this.crypto.matchesKeyCheck(uuid, keyCheck, sealedOf(note)))) {
      return { outcome: 'key_required' };
    }
    const given = passcode === '' ? null : passcode;
    // Decrypt first: a tampered row throws here, before anything is counted.
    const opened = await this.crypto.open(uuid, given, sealedOf(note));
    if (opened.outcome === 'wrong_passcode') {
      // No passcode offered for a protected note is a request for the form, not an attempt.
      if (given === null) return { outcome: 'wrong_passcode', attemptsLeft: Math.max(0, MAX_FAILED_ATTEMPTS - note.failedAttempts), lockedOut: false };
      return this.countFailure(lookup);
    }
    const claimed = await this.claimView(lookup, unpackNotificationAddress(opened.note.notificationEmail));
    if (!claimed) return { outcome: 'not_found' };
    return { outcome: 'revealed', content: opened.note.content, clientEncrypted, ...claimed };
  }

  async takedown(uuid: string): Promise<boolean> {
    const lookup = this.crypto.lookup(uuid);
    const now = this.clock.now();
    const messages = await this.store.transaction(async (tx) => {
      const state = await tx.lock(lookup);
      if (!state || state.expiresAt.getTime() <= now.getTime()) return null;
      await tx.delete(lookup);
      const out = [noteEventMessage('note.destroyed', { note_id: state.noteRef, reason: 'takedown', was_read: state.currentViews > 0 }, now)];
      await tx.enqueue(out);
      return out;
    });
    if (!messages) return false;
    this.logger.info('note taken down');
    notifyObserver(this.events, messages);
    return true;
  }

  private async claimView(lookup: string, notification: NotificationAddress | null) {
    const now = this.clock.now();
    const result = await this.store.transaction(async (tx) => {
      if (!(await tx.claimView(lookup, now))) return null;
      const state = await tx.lock(lookup);
      if (!state) throw new Error('a claimed note vanished inside its transaction');
      const destroyed = state.currentViews >= state.maxViews;
      const messages = [noteEventMessage('note.accessed', { note_id: state.noteRef }, now)];
      if (notification !== null) {
        messages.push(mailCommandMessage(this.mailSealer, {
          kind: 'notification',
          to: notification.address,
          read_at: formatTimestamp(now),
          views_left: Math.max(0, state.maxViews - state.currentViews),
          ...(notification.lang ? { lang: notification.lang } : {}),
        }, now));
      }
      if (destroyed) {
        await tx.delete(lookup);
        messages.push(noteEventMessage('note.destroyed', { note_id: state.noteRef, reason: 'views', was_read: true }, now));
      }
      await tx.enqueue(messages);
      return { messages, currentViews: state.currentViews, maxViews: state.maxViews, destroyed };
    });
    if (!result) return null;
    notifyObserver(this.events, result.messages);
    return { currentViews: result.currentViews, maxViews: result.maxViews, destroyed: result.destroyed };
  }

  private async countFailure(lookup: string): Promise<RevealResult> {
    const now = this.clock.now();
    const result = await this.store.transaction(async (tx) => {
      if (!(await tx.countFailedAttempt(lookup, now))) return null;
      const state = await tx.lock(lookup);
      if (!state) throw new Error('a counted note vanished inside its transaction');
      const lockedOut = state.failedAttempts >= MAX_FAILED_ATTEMPTS;
      const messages = [noteEventMessage('note.failed_access', { note_id: state.noteRef }, now)];
      if (lockedOut) {
        await tx.delete(lookup);
        messages.push(noteEventMessage('note.destroyed', { note_id: state.noteRef, reason: 'lockout', was_read: state.currentViews > 0 }, now));
      }
      await tx.enqueue(messages);
      return { messages, lockedOut, attemptsLeft: Math.max(0, MAX_FAILED_ATTEMPTS - state.failedAttempts) };
    });
    if (!result) return { outcome: 'not_found' };
    if (result.lockedOut) this.logger.info('note destroyed after repeated wrong passcodes');
    notifyObserver(this.events, result.messages);
    return { outcome: 'wrong_passcode', attemptsLeft: result.attemptsLeft, lockedOut: result.lockedOut };
  }
}

function sealedOf(note: NoteRecord): SealedNote {
  return {
    lookup: note.lookup,
    keyId: note.keyId,
    salt: note.salt,
    kdf: note.kdf,
    checkBox: note.checkBox,
    contentBox: note.contentBox,
    emailBox: note.emailBox,
    keyCheckBox: note.keyCheckBox ?? null,
  };
}

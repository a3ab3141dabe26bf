import { AppError, DependencyUnavailableError, NoteNotFoundError, ValidationError, formatTimestamp, type Clock, type Logger, type MessageSealing, type OutgoingMessage } from '@vanish/common';
import { hasLoneSurrogate } from './create-note-validator';
import type { CreateNoteInput, CreatedNote, NoteMetadata, NotesApi, RevealOptions, RevealResult } from './notes';
import type { NoteCrypto, OpenedNote, SealedNote } from './note-crypto';
import { packNotificationAddress, unpackNotificationAddress } from './notification-address';
import { mailCommandMessage, noteEventMessage, notifyObserver, type NoteEventsObserver } from './note-events';
import type { NoteRecord, NoteStore, NoteTimeControls, ReceiptEntry } from './ports';
import { announceRelease, controlsView, isHeldAt } from './note-release';
import type { ReceiptIds } from '../receipts/receipt-ids';
import { webhooksDisabledError, type NoteWebhooks, type RequestAccess, type WebhookContext } from './note-webhooks';
import type { FileService, PreparedFiles } from '../files/file-service';
import type { RevealedFile } from './notes';

/** DECISIONS 3: no note is ever readable more than 100 times; time notes report 100. */
export const TIME_NOTE_MAX_VIEWS = 100;
/** DECISIONS 3: the fifth wrong passcode destroys the note. */
export const MAX_FAILED_ATTEMPTS = 5;
export const DEFAULT_RETENTION_HOURS = 720;
/**
 * How long a reserved passcode check may take before it is presumed dead (its replica crashed
 * between reserving and settling) and counted as failed. A live check takes well under a
 * second, a few seconds with a full scrypt queue or a slow database; its store calls give up
 * after seconds.
 */
export const ATTEMPT_RESERVATION_MS = 60_000;

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
  /** Issues each note's receipt (DECISIONS 12); without it notes are made without receipts. */
  receiptIds?: ReceiptIds;
  /** DECISIONS 11: webhook registration and the sealed webhook part of events; unset: webhook_url is refused. */
  webhooks?: NoteWebhooks;
  /** DECISIONS 17: the digest of the release manifest this service serves, recorded with each reveal. */
  releaseDigest?: string;
  /** DECISIONS 14: files of notes; unset: a creation with files is refused (503, no file store). */
  files?: FileService;
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
  private readonly receiptIds: ReceiptIds | undefined;
  private readonly webhooks: NoteWebhooks | undefined;
  private readonly releaseDigest: string | undefined;
  private readonly files: FileService | undefined;

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
    this.receiptIds = options.receiptIds;
    this.webhooks = options.webhooks;
    this.releaseDigest = options.releaseDigest;
    this.files = options.files;
  }

  /** Gives the SPEC 6 events among `messages` their sealed webhook part (DECISIONS 11). */
  private withWebhookParts(messages: OutgoingMessage[], context: WebhookContext): OutgoingMessage[] {
    return this.webhooks ? this.webhooks.attach(messages, context) : messages;
  }

  async create(input: CreateNoteInput): Promise<CreatedNote> {
    // UTF-8 encoding would silently replace a lone surrogate; refuse it instead (the HTTP
    // validator already does; this keeps the domain honest for every other caller).
    if (hasLoneSurrogate(input.content)) throw new ValidationError('INVALID_CONTENT', 'content is not valid Unicode text', { parameter: 'content' });
    if (input.passcode && hasLoneSurrogate(input.passcode)) throw new ValidationError('INVALID_PASSCODE', 'passcode is not valid Unicode text', { parameter: 'passcode' });
    const fileSizes = input.files?.map((file) => file.size) ?? [];
    if (fileSizes.length > 0) {
      if (!input.keyCheck) throw new ValidationError('INVALID_FILES', 'files are sealed on the writer\'s machine: send them with client_encrypted true', { parameter: 'files' });
      if (!this.files) throw new DependencyUnavailableError('file storage', 'This service keeps no files');
      this.files.checkLimits(fileSizes);
    }
    let webhook: { sealedTarget: string; secret?: string } | null = null;
    if (input.webhookUrl) {
      if (!this.webhooks) throw webhooksDisabledError();
      webhook = await this.webhooks.register(input.webhookUrl);
    } else if (input.webhookTarget) {
      webhook = { sealedTarget: input.webhookTarget };
    }
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + (input.expiryType === 'view' ? this.retentionMs : input.expiryHours * HOUR_MS));
    const releaseAt = releaseTimeOf(input, now, expiresAt);
    const uuid = this.crypto.newUuid();
    const maxViews = input.expiryType === 'time' ? TIME_NOTE_MAX_VIEWS : input.maxViews;
    const passcode = input.passcode === '' ? null : input.passcode;
    const keyCheck = input.keyCheck ?? null;
    const random = this.crypto.newNoteRandom();
    const receiptId = this.receiptIds?.idFrom(random.receiptIdBytes);
    const sealed = await this.crypto.seal(uuid, {
      content: input.content, passcode, notificationEmail: packNotificationAddress(input.notificationEmail, input.lang), keyCheck, receiptId,
    }, random);
    const note: NoteRecord = {
      ...sealed,
      noteRef: random.noteRef,
      hasPasscode: passcode !== null,
      expiryType: input.expiryType,
      maxViews,
      currentViews: 0,
      failedAttempts: 0,
      attemptsInFlight: 0,
      attemptsReservedUntil: new Date(0),
      createdAt: now,
      expiresAt,
      ...(receiptId !== undefined ? { receiptKey: this.receiptIds!.keyOf(receiptId) } : {}),
      ...(webhook ? { webhookBox: webhook.sealedTarget } : {}),
    };
    // DECISIONS 14: the uploads exist in the store before the note does (a store that fails stores no note).
    let prepared: PreparedFiles | undefined;
    if (fileSizes.length > 0) {
      prepared = await this.files!.prepare(fileSizes);
      note.files = prepared.records;
    }
    const url = `${this.publicBaseUrl}/${uuid}`;
    const messages: OutgoingMessage[] = [noteEventMessage('note.created', { note_id: note.noteRef, expiry_type: input.expiryType }, now)];
    let linkMail: OutgoingMessage | null = null;
    if (input.sendLinkEmail) {
      linkMail = mailCommandMessage(this.mailSealer, {
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
      }, now);
    }
    const controls: NoteTimeControls | undefined = input.shrinkAfterFirstViewMinutes !== undefined || releaseAt !== null ? {
      shrinkMinutes: input.shrinkAfterFirstViewMinutes ?? null,
      shrunkAt: null,
      releaseAt,
      silenceHours: input.releaseAfterSilenceHours ?? null,
      releasedAt: null,
      // DECISIONS 16: a gated note's link e-mail waits for its release, still sealed to the mailer.
      releaseMail: releaseAt !== null && linkMail ? JSON.stringify(linkMail) : null,
    } : undefined;
    if (linkMail && releaseAt === null) messages.push(linkMail);
    if (controls) note.controls = controls;
    try {
      await this.store.insertNew(note, messages);
    } catch (err) {
      // Not stored (an answer of 503 or 4xx means the note never committed): its uploads go too. A commit
      // whose outcome is unknown (500) keeps them for the sweep to judge against the database.
      if (prepared && !(err instanceof AppError && err.statusCode >= 500 && err.statusCode !== 503)) await this.files!.discard(prepared.records);
      throw err;
    }
    notifyObserver(this.events, messages);
    const receiptUrl = receiptId !== undefined ? { receiptUrl: `${this.publicBaseUrl}/r/${receiptId}` } : {};
    return {
      uuid, url, expiryType: input.expiryType, expiresAt, maxViews, hasPasscode: note.hasPasscode, createdAt: now, noteRef: note.noteRef,
      ...receiptUrl,
      ...(webhook?.secret !== undefined ? { webhookSecret: webhook.secret } : {}),
      ...(controls ? { controls: controlsView(controls, now) } : {}),
      ...(prepared ? { uploads: prepared.uploads.map((upload) => ({ url: this.files!.uploadUrl(upload.token), size: upload.size })) } : {}),
    };
  }

  async metadata(uuid: string): Promise<NoteMetadata> {
    const now = this.clock.now();
    const note = await this.store.findActive(this.crypto.lookup(uuid), now);
    if (!note) throw new NoteNotFoundError();
    const controls = controlsView(note.controls, now);
    return {
      ...(controls ? { controls } : {}),
      hasPasscode: note.hasPasscode,
      clientEncrypted: Boolean(note.keyCheckBox),
      expiryType: note.expiryType,
      expiresAt: note.expiresAt,
      maxViews: note.maxViews,
      currentViews: note.currentViews,
      createdAt: note.createdAt,
      ...(note.fileCount ? { fileCount: note.fileCount, uploading: (note.filesPending ?? 0) > 0 } : {}),
    };
  }

  async reveal(uuid: string, passcode: string | null, keyCheck: string | null = null, access?: RequestAccess, options: RevealOptions = {}): Promise<RevealResult> {
    // DECISIONS 15: a request's submission is opened from its inbox; no one presented its link, so no event names it.
    const context = { uuid: options.withoutNoteId ? null : uuid, access: access ?? null };
    const lookup = this.crypto.lookup(uuid);
    const seenAt = this.clock.now();
    const note = await this.store.findActive(lookup, seenAt);
    if (!note) return { outcome: 'not_found' };
    // DECISIONS 16: before its release nothing is checked, consumed or counted (the claims re-check it).
    if (isHeldAt(note.controls, seenAt)) {
      return { outcome: 'not_yet', opensAt: note.controls?.silenceHours ? null : note.controls!.releaseAt };
    }
    // DECISIONS 13: no view, no passcode work and no lock-out count without proof of the fragment key.
    const clientEncrypted = Boolean(note.keyCheckBox);
    if (clientEncrypted && (keyCheck === null || !this.crypto.matchesKeyCheck(uuid, keyCheck, sealedOf(note)))) {
      return { outcome: 'key_required' };
    }
    // DECISIONS 14: a note whose files are not all uploaded cannot be read yet: nothing claimed or counted.
    if ((note.filesPending ?? 0) > 0) return { outcome: 'upload_incomplete' };
    const withFiles = (note.fileCount ?? 0) > 0;
    const given = passcode === '' ? null : passcode;
    // No passcode offered for a protected note is a request for the form, not an attempt.
    if (note.hasPasscode && given === null) return { outcome: 'wrong_passcode', attemptsLeft: attemptsLeft(note), lockedOut: false };
    if (!note.hasPasscode) {
      // Decrypt first: a tampered row throws here, before anything is counted.
      const opened = await this.crypto.open(uuid, null, sealedOf(note));
      if (opened.outcome !== 'opened') throw new Error('a note without passcode asked for one');
      return this.claimView(lookup, opened.note, false, clientEncrypted, context, withFiles);
    }
    // DECISIONS 3: the attempt is reserved (committed, so every replica sees it) before the
    // passcode is checked, so that no more than five guesses are ever checked, however many
    // arrive at once; a right passcode gets its reservation back in the claim transaction.
    const reserved = await this.reserveAttempt(lookup, context);
    if (reserved !== 'reserved') return { outcome: reserved };
    let opened: Awaited<ReturnType<NoteCrypto['open']>>;
    try {
      opened = await this.crypto.open(uuid, given, sealedOf(note));
    } catch (err) {
      // Not checked (a tampered row, a full scrypt queue): no lock-out count (DECISIONS 3).
      await this.store.transaction((tx) => tx.refundAttempt(lookup)).catch((refundErr: unknown) => {
        this.logger.warn('a reserved passcode attempt could not be given back; it stays counted', { err: (refundErr as Error).message });
      });
      throw err;
    }
    if (opened.outcome === 'wrong_passcode') return this.countFailure(lookup, context);
    return this.claimView(lookup, opened.note, true, clientEncrypted, context, withFiles);
  }

  async takedown(uuid: string): Promise<boolean> {
    const lookup = this.crypto.lookup(uuid);
    const now = this.clock.now();
    const messages = await this.store.transaction(async (tx) => {
      const state = await tx.lock(lookup);
      if (!state || state.expiresAt.getTime() <= now.getTime()) return null;
      await tx.delete(lookup);
      const out = this.withWebhookParts(
        [noteEventMessage('note.destroyed', { note_id: state.noteRef, reason: 'takedown', was_read: state.currentViews > 0 }, now)],
        { uuid: null, access: null, target: state.webhookBox ?? null },
      );
      await tx.enqueue(out);
      await tx.recordReceipt([{ noteRef: state.noteRef, at: now, kind: 'end', reason: 'takedown' }]);
      return out;
    });
    if (!messages) return false;
    this.logger.info('note taken down');
    notifyObserver(this.events, messages);
    return true;
  }

  /**
   * Reserves one passcode check (DECISIONS 3). When refused while the note lives, reservations
   * whose checks died (past ATTEMPT_RESERVATION_MS) are counted as failed, which may lock the note
   * out, and the reservation is tried once more.
   */
  private async reserveAttempt(lookup: string, context: Omit<WebhookContext, 'target'>): Promise<'reserved' | 'attempts_busy' | 'not_found'> {
    const reserve = () => {
      const now = this.clock.now();
      return this.store.reserveAttempt(lookup, now, MAX_FAILED_ATTEMPTS, new Date(now.getTime() + ATTEMPT_RESERVATION_MS));
    };
    if (await reserve()) return 'reserved';
    const now = this.clock.now();
    const current = await this.store.findActive(lookup, now);
    if (!current) return 'not_found';
    if (current.attemptsInFlight === 0 || current.attemptsReservedUntil.getTime() > now.getTime()) return 'attempts_busy';
    const result = await this.store.transaction(async (tx) => {
      const state = await tx.lock(lookup);
      if (!state || state.expiresAt.getTime() <= now.getTime()) return { gone: true, messages: [] };
      if (state.attemptsInFlight === 0 || state.attemptsReservedUntil.getTime() > now.getTime()) return { gone: false, messages: [] };
      await tx.countAbandonedAttempts(lookup, state.attemptsInFlight);
      let messages = Array.from({ length: state.attemptsInFlight }, () => noteEventMessage('note.failed_access', { note_id: state.noteRef }, now));
      const lockedOut = state.failedAttempts + state.attemptsInFlight >= MAX_FAILED_ATTEMPTS;
      if (lockedOut) {
        await tx.delete(lookup);
        messages.push(noteEventMessage('note.destroyed', { note_id: state.noteRef, reason: 'lockout', was_read: state.currentViews > 0 }, now));
      }
      // The link was presented (by the requests whose checks died, and by this one); their access
      // details are gone, so the webhook gets none (DECISIONS 11).
      messages = this.withWebhookParts(messages, { uuid: context.uuid, access: null, target: state.webhookBox ?? null });
      await tx.enqueue(messages);
      // The receipt shows these as the wrong passcodes they are now counted as (DECISIONS 12).
      const receipt: ReceiptEntry[] = Array.from({ length: state.attemptsInFlight }, () => ({ noteRef: state.noteRef, at: now, kind: 'wrong_passcode' as const }));
      if (lockedOut) receipt.push({ noteRef: state.noteRef, at: now, kind: 'end', reason: 'lockout' });
      await tx.recordReceipt(receipt);
      return { gone: lockedOut, messages };
    });
    if (result.messages.length > 0) {
      this.logger.warn('passcode checks that never settled were counted as failed attempts', { count: result.messages.filter((m) => m.routingKey === 'note.failed_access').length });
      notifyObserver(this.events, result.messages);
    }
    if (result.gone) return 'not_found';
    return (await reserve()) ? 'reserved' : 'attempts_busy';
  }

  /** Claims one view and, with `refund`, gives the passcode check's reservation back in the same transaction. */
  private async claimView(
    lookup: string, opened: OpenedNote, refund: boolean, clientEncrypted: boolean, context: Omit<WebhookContext, 'target'>, withFiles = false,
  ): Promise<RevealResult> {
    if (withFiles && !this.files) throw new DependencyUnavailableError('file storage', 'This service keeps no files');
    const now = this.clock.now();
    // Issue 20: the sealed e-mail box holds the address and the creating page's language.
    const notification = unpackNotificationAddress(opened.notificationEmail);
    const result = await this.store.transaction(async (tx) => {
      if (refund) await tx.refundAttempt(lookup);
      if (!(await tx.claimView(lookup, now))) return null;
      const state = await tx.lock(lookup);
      if (!state) throw new Error('a claimed note vanished inside its transaction');
      const destroyed = state.currentViews >= state.maxViews;
      // DECISIONS 16: a release not announced yet is announced before its first reveal.
      const released = await announceRelease(tx, lookup, state, now, this.webhooks);
      // DECISIONS 14: this reader's download addresses, stored (hashed) with the claim; they hold the
      // bytes for the download window even when this reveal ends the note.
      let files: RevealedFile[] | undefined;
      if (withFiles) {
        if (!tx.filesOf || !tx.issueDownloads) throw new Error('this note store keeps no files');
        const downloads = this.files!.newDownloads(await tx.filesOf(lookup));
        await tx.issueDownloads(lookup, state.noteRef, downloads.issued, downloads.expiresAt);
        files = downloads.urls;
      }
      let messages = [noteEventMessage('note.accessed', { note_id: state.noteRef }, now)];
      if (notification !== null) {
        messages.push(mailCommandMessage(this.mailSealer, {
          kind: 'notification',
          to: notification.address,
          read_at: formatTimestamp(now),
          views_left: Math.max(0, state.maxViews - state.currentViews),
          ...(opened.receiptId ? { receipt_url: `${this.publicBaseUrl}/r/${opened.receiptId}` } : {}),
          ...(notification.lang ? { lang: notification.lang } : {}),
        }, now));
      }
      if (destroyed) {
        await tx.delete(lookup);
        messages.push(noteEventMessage('note.destroyed', { note_id: state.noteRef, reason: 'views', was_read: true }, now));
      }
      messages = this.withWebhookParts(messages, { ...context, target: state.webhookBox ?? null });
      await tx.enqueue(messages);
      const receipt: ReceiptEntry[] = [{ noteRef: state.noteRef, at: now, kind: 'reveal', ...(this.releaseDigest ? { releaseDigest: this.releaseDigest } : {}) }];
      // DECISIONS 16: the claim that made the first view also shrank the expiry (same UPDATE); its receipt follows.
      if (state.currentViews === 1 && state.controls?.shrunkAt && state.controls.shrunkAt.getTime() === now.getTime()) {
        receipt.push({ noteRef: state.noteRef, at: now, kind: 'shrink', expiresAt: state.expiresAt });
      }
      if (destroyed) receipt.push({ noteRef: state.noteRef, at: now, kind: 'end', reason: 'views' });
      await tx.recordReceipt(receipt);
      return { messages: released ? [...released, ...messages] : messages, currentViews: state.currentViews, maxViews: state.maxViews, destroyed, files };
    });
    if (!result) return { outcome: 'not_found' };
    notifyObserver(this.events, result.messages);
    return {
      outcome: 'revealed', content: opened.content, clientEncrypted, currentViews: result.currentViews, maxViews: result.maxViews, destroyed: result.destroyed,
      ...(result.files ? { files: result.files } : {}),
    };
  }

  private async countFailure(lookup: string, context: Omit<WebhookContext, 'target'>): Promise<RevealResult> {
    const now = this.clock.now();
    const result = await this.store.transaction(async (tx) => {
      if (!(await tx.countFailedAttempt(lookup, now))) return null;
      const state = await tx.lock(lookup);
      if (!state) throw new Error('a counted note vanished inside its transaction');
      const lockedOut = state.failedAttempts >= MAX_FAILED_ATTEMPTS;
      let messages = [noteEventMessage('note.failed_access', { note_id: state.noteRef }, now)];
      if (lockedOut) {
        await tx.delete(lookup);
        messages.push(noteEventMessage('note.destroyed', { note_id: state.noteRef, reason: 'lockout', was_read: state.currentViews > 0 }, now));
      }
      messages = this.withWebhookParts(messages, { ...context, target: state.webhookBox ?? null });
      await tx.enqueue(messages);
      const receipt: ReceiptEntry[] = [{ noteRef: state.noteRef, at: now, kind: 'wrong_passcode' }];
      if (lockedOut) receipt.push({ noteRef: state.noteRef, at: now, kind: 'end', reason: 'lockout' });
      await tx.recordReceipt(receipt);
      return { messages, lockedOut, attemptsLeft: attemptsLeft(state) };
    });
    if (!result) return { outcome: 'not_found' };
    if (result.lockedOut) this.logger.info('note destroyed after repeated wrong passcodes');
    notifyObserver(this.events, result.messages);
    return { outcome: 'wrong_passcode', attemptsLeft: result.attemptsLeft, lockedOut: result.lockedOut };
  }
}

/**
 * DECISIONS 16: when the note opens, or null when it is not gated. A release must come after the
 * creation and before the note's expiry (a note that ends unreleased would be a promise not kept).
 */
function releaseTimeOf(input: CreateNoteInput, now: Date, expiresAt: Date): Date | null {
  if (input.availableFrom) {
    if (input.availableFrom.getTime() <= now.getTime() || input.availableFrom.getTime() >= expiresAt.getTime()) {
      throw new ValidationError('INVALID_AVAILABLE_FROM', `available_from must be after now and before the note expires (${formatTimestamp(expiresAt)} UTC)`, { parameter: 'available_from' });
    }
    return input.availableFrom;
  }
  if (input.releaseAfterSilenceHours !== undefined) {
    const first = new Date(now.getTime() + input.releaseAfterSilenceHours * HOUR_MS);
    if (first.getTime() >= expiresAt.getTime()) {
      throw new ValidationError('INVALID_RELEASE_AFTER_SILENCE', `release_after_silence_hours must end before the note expires (${formatTimestamp(expiresAt)} UTC)`, { parameter: 'release_after_silence_hours' });
    }
    return first;
  }
  return null;
}

/** Tries left for the next guess: neither counted failures nor checks under way can be used again. */
function attemptsLeft(state: { failedAttempts: number; attemptsInFlight: number }): number {
  return Math.max(0, MAX_FAILED_ATTEMPTS - state.failedAttempts - state.attemptsInFlight);
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
    receiptBox: note.receiptBox ?? null,
  };
}

import { randomUUID } from 'node:crypto';
import {
  AppError, NotFoundError, ValidationError, formatTimestamp, type Clock, type ExpiryType, type Logger, type MessageSealing, type OutgoingMessage,
  type AppErrorOptions,
} from '@vanish/common';
import type { NotesApi, RevealedFile } from '../domain/notes';
import type { FileService } from '../files/file-service';
import { mailCommandMessage } from '../domain/note-events';
import { webhooksDisabledError, type NoteWebhooks, type RequestAccess } from '../domain/note-webhooks';
import type { RequestCrypto, RequestSettings } from './request-crypto';
import { REQUEST_ID, type RequestIds } from './request-ids';
import type { CreateRequestInput, SubmissionInput } from './request-validator';
import type { RequestStore, StoredRequest, StoredSubmission } from './ports';

const DAY_MS = 86_400_000;
/** The webhook event of a submission (DECISIONS 15): the request's reference, never an id that opens anything. */
export const REQUEST_SUBMITTED = 'request.submitted';

/** 410: the request takes no more submissions (its count, its date, or its requester closed it). */
export class RequestClosedError extends AppError {
  readonly statusCode = 410;
  constructor(reason: RequestStatus, options?: AppErrorOptions) {
    super('REQUEST_CLOSED', `This request takes no more submissions (${reason})`, options);
  }
}

export class RequestNotFoundError extends NotFoundError {
  constructor() {
    super('REQUEST_NOT_FOUND', 'Request not found');
  }
}

export type RequestStatus = 'open' | 'full' | 'expired' | 'closed';
export type SubmissionState = 'waiting' | 'opened' | 'expired';

export interface CreatedRequest {
  requestUrl: string;
  /** Without its fragment: the maker adds `#<private key>`, which the server never has. */
  inboxUrl: string;
  requestRef: string;
  expiresAt: Date;
  maxSubmissions: number;
  webhookSecret?: string;
}

/** What a sender sees of a request. */
export interface RequestForSender {
  label: string;
  publicKey: string;
  allowFiles: boolean;
  expiresAt: Date;
  status: RequestStatus;
  allowedOrigins: string[];
}

export interface SubmittedNote {
  number: number;
  submittedAt: Date;
  receiptUrl?: string;
  /** DECISIONS 14: one upload address per declared file, in their order (as a note's creation answers them). */
  uploads?: Array<{ url: string; size: number }>;
}

export interface InboxSubmission {
  number: number;
  submittedAt: Date;
  size: number;
  state: SubmissionState;
  ephemeralKey: string;
  expiresAt: Date;
}

export interface InboxView {
  requestUrl: string;
  requestRef: string;
  label: string;
  publicKey: string;
  status: RequestStatus;
  maxSubmissions: number;
  submissions: InboxSubmission[];
  createdAt: Date;
  expiresAt: Date;
  allowFiles: boolean;
  allowedOrigins: string[];
}

export type InboxOpenResult =
  | {
    outcome: 'revealed'; envelope: string; ephemeralKey: string; number: number; currentViews: number; maxViews: number; destroyed: boolean;
    /** DECISIONS 14: the answer's download addresses, as a note's reveal hands them out. */
    files?: RevealedFile[];
  }
  /** DECISIONS 14: a file of the answer is still being uploaded by its sender: nothing claimed, nothing counted. */
  | { outcome: 'uploading' }
  | { outcome: 'key_required' }
  | { outcome: 'gone' };

export interface RequestServiceOptions {
  store: RequestStore;
  ids: RequestIds;
  crypto: RequestCrypto;
  notes: NotesApi;
  /**
   * DECISIONS 14: the files' limits (FILE_MAX_COUNT, FILE_MAX_BYTES), checked before a slot is taken; the uploads
   * themselves are the note creation's (NotesApi.create with `files`). Unset: answers with files are refused.
   */
  files?: Pick<FileService, 'checkLimits'>;
  /** The note lookup of a uuid (NoteCrypto.lookup), to read a submission's state from its note's row. */
  noteLookup: (uuid: string) => string;
  mailSealer: MessageSealing;
  /** Webhook registration, and the part sealed to the webhooks service; unset: webhook_url is refused. */
  webhooks?: NoteWebhooks;
  /** Seals a request.submitted event's part to the webhooks service (WEBHOOK_SEAL_PURPOSE). */
  webhookEventSealer?: MessageSealing;
  clock: Clock;
  publicBaseUrl: string;
  logger: Logger;
  metrics?: RequestMetricsObserver;
}

export interface RequestMetricsObserver {
  created(): void;
  submitted(outcome: 'accepted' | 'closed'): void;
  opened(): void;
  closedEarly(): void;
}

/**
 * Requests (DECISIONS 15): a drop box sealed end to end. The requester's key pair is made on their machine; the
 * server keeps the public key, the request's settings sealed under the request id, and each submission as a note
 * of its own whose uuid is sealed to the inbox. Opening a submission is a reveal like any note's.
 */
export class RequestService {
  private readonly base: string;

  constructor(private readonly options: RequestServiceOptions) {
    this.base = options.publicBaseUrl.replace(/\/+$/, '');
  }

  async create(input: CreateRequestInput): Promise<CreatedRequest> {
    const { ids, crypto, clock, webhooks, store } = this.options;
    let webhook: { sealedTarget: string; secret: string } | null = null;
    if (input.webhookUrl) {
      if (!webhooks) throw webhooksDisabledError();
      webhook = await webhooks.register(input.webhookUrl);
    }
    const now = clock.now();
    const requestId = ids.newId();
    const inboxId = ids.newId();
    const keyId = crypto.currentKeyId;
    const inboxSealKey = crypto.inboxSealKey(keyId, inboxId);
    const settings: RequestSettings = {
      label: input.label,
      allowedOrigins: input.allowedOrigins,
      notificationEmail: input.notificationEmail,
      ...(input.lang && input.lang !== 'en' ? { lang: input.lang } : {}),
    };
    const request: StoredRequest = {
      requestKey: ids.requestKeyOf(requestId),
      inboxKey: ids.inboxKeyOf(inboxId),
      requestRef: ids.newRef(),
      keyId,
      publicKey: input.publicKey,
      inboxSealKey,
      settingsBox: crypto.sealSettings(keyId, requestId, settings),
      requestIdBox: crypto.sealToInbox(inboxSealKey, requestId),
      webhookBox: webhook?.sealedTarget ?? null,
      allowFiles: input.allowFiles,
      expiryType: input.expiryType,
      expiryHours: input.expiryHours,
      maxViews: input.expiryType === 'time' ? 100 : input.maxViews,
      maxSubmissions: input.maxSubmissions,
      submissions: 0,
      createdAt: now,
      expiresAt: new Date(now.getTime() + input.openDays * DAY_MS),
      closedAt: null,
    };
    await store.insert(request);
    this.options.metrics?.created();
    return {
      requestUrl: `${this.base}/q/${requestId}`,
      inboxUrl: `${this.base}/i/${inboxId}`,
      requestRef: request.requestRef,
      expiresAt: request.expiresAt,
      maxSubmissions: request.maxSubmissions,
      ...(webhook ? { webhookSecret: webhook.secret } : {}),
    };
  }

  private async findByRequestId(requestId: string): Promise<StoredRequest> {
    if (!REQUEST_ID.test(requestId)) throw new RequestNotFoundError();
    const request = await this.options.store.findByRequestKey(this.options.ids.requestKeyOf(requestId));
    if (!request) throw new RequestNotFoundError();
    return request;
  }

  private statusOf(request: StoredRequest, now: Date): RequestStatus {
    if (request.closedAt !== null) return 'closed';
    if (request.submissions >= request.maxSubmissions) return 'full';
    if (request.expiresAt.getTime() <= now.getTime()) return 'expired';
    return 'open';
  }

  /** The request as its sender's form shows it; unknown ids are 404 (a purged request too). */
  async forSender(requestId: string): Promise<RequestForSender> {
    const request = await this.findByRequestId(requestId);
    const settings = this.options.crypto.openSettings(request.keyId, requestId, request.settingsBox);
    return {
      label: settings.label,
      publicKey: request.publicKey,
      allowFiles: request.allowFiles,
      expiresAt: request.expiresAt,
      status: this.statusOf(request, this.options.clock.now()),
      allowedOrigins: settings.allowedOrigins,
    };
  }

  /**
   * A sender's submission: takes a slot (one conditional UPDATE, so a count is never exceeded under any
   * concurrency), makes the note, then records it with its e-mail and webhook event in one transaction.
   */
  async submit(requestId: string, input: SubmissionInput): Promise<SubmittedNote> {
    const { store, crypto, clock, notes } = this.options;
    const request = await this.findByRequestId(requestId);
    // DECISIONS 14 and 15: files only where the requester allowed them, within the files' limits; checked before
    // a slot is taken, so a refusal stores nothing.
    const fileSizes = input.files?.map((file) => file.size) ?? [];
    if (fileSizes.length > 0) {
      if (!request.allowFiles) throw new ValidationError('FILES_NOT_ALLOWED', 'This request takes text only: its requester did not allow files', { parameter: 'files' });
      this.options.files?.checkLimits(fileSizes);
    }
    const now = clock.now();
    const status = this.statusOf(request, now);
    if (status !== 'open') {
      this.options.metrics?.submitted('closed');
      throw new RequestClosedError(status);
    }
    const settings = crypto.openSettings(request.keyId, requestId, request.settingsBox);
    const number = await store.claimSlot(request.requestKey, now);
    if (number === null) {
      this.options.metrics?.submitted('closed');
      throw new RequestClosedError(this.statusOf((await store.findByRequestKey(request.requestKey)) ?? request, now));
    }
    let created;
    try {
      created = await notes.create({
        content: input.envelope,
        keyCheck: input.keyCheck,
        expiryType: request.expiryType,
        expiryHours: request.expiryHours,
        maxViews: request.maxViews,
        passcode: null,
        notificationEmail: null,
        sendLinkEmail: null,
        webhookTarget: request.webhookBox,
        ...(settings.lang ? { lang: settings.lang } : {}),
        // The answer is a note: its files are pre-created exactly as a note's are (FileService, through NotesApi).
        ...(fileSizes.length > 0 ? { files: input.files } : {}),
      });
    } catch (err) {
      await store.releaseSlot(request.requestKey).catch((releaseErr: unknown) => {
        this.options.logger.warn('a request slot could not be given back; it stays used', { err: (releaseErr as Error).message });
      });
      throw err;
    }
    // What the inbox lists: the sealed envelope's characters and the files' sealed bytes.
    const size = input.envelope.length + fileSizes.reduce((sum, bytes) => sum + bytes, 0);
    const messages: OutgoingMessage[] = [];
    if (settings.notificationEmail) {
      messages.push(mailCommandMessage(this.options.mailSealer, {
        kind: 'request',
        to: settings.notificationEmail,
        submitted_at: formatTimestamp(now),
        number,
        max_submissions: request.maxSubmissions,
        ...(settings.lang ? { lang: settings.lang } : {}),
      }, now));
    }
    if (request.webhookBox && this.options.webhookEventSealer) {
      messages.push(this.submittedEvent(request, number, created.noteRef ?? '', size, now));
    }
    await store.recordSubmission({
      requestKey: request.requestKey,
      number,
      noteLookup: this.options.noteLookup(created.uuid),
      uuidBox: crypto.sealToInbox(request.inboxSealKey, created.uuid),
      ephemeralKey: input.ephemeralPublicKey,
      size,
      createdAt: now,
      noteExpiresAt: created.expiresAt,
    }, messages);
    this.options.metrics?.submitted('accepted');
    return {
      number, submittedAt: now, ...(created.receiptUrl ? { receiptUrl: created.receiptUrl } : {}), ...(created.uploads ? { uploads: created.uploads } : {}),
    };
  }

  /** request.submitted: in the webhook events' envelope, its target sealed to the webhooks service. */
  private submittedEvent(request: StoredRequest, number: number, noteRef: string, size: number, now: Date): OutgoingMessage {
    const id = randomUUID();
    const part = { note_id: null, access_details: null, target: request.webhookBox };
    const envelope = {
      id,
      event: REQUEST_SUBMITTED,
      version: 1,
      timestamp: now.toISOString(),
      data: {
        // The dispatcher keys its delivery records by this reference (a request's, never an id that opens anything).
        note_id: request.requestRef,
        request_ref: request.requestRef,
        note_ref: noteRef,
        submission: number,
        submissions_left: Math.max(0, request.maxSubmissions - number),
        size,
      },
      webhook: this.options.webhookEventSealer!.seal(JSON.stringify(part)),
    };
    return { id, routingKey: REQUEST_SUBMITTED, body: JSON.stringify(envelope) };
  }

  private async findByInboxId(inboxId: string): Promise<StoredRequest> {
    if (!REQUEST_ID.test(inboxId)) throw new RequestNotFoundError();
    const request = await this.options.store.findByInboxKey(this.options.ids.inboxKeyOf(inboxId));
    if (!request) throw new RequestNotFoundError();
    return request;
  }

  private stateOf(submission: StoredSubmission): SubmissionState {
    if (submission.openedAt !== null) return 'opened';
    return submission.noteActive ? 'waiting' : 'expired';
  }

  async inbox(inboxId: string): Promise<InboxView> {
    const { store, crypto, clock } = this.options;
    const request = await this.findByInboxId(inboxId);
    const requestId = crypto.openForInbox(request.keyId, inboxId, request.requestIdBox);
    const settings = crypto.openSettings(request.keyId, requestId, request.settingsBox);
    const now = clock.now();
    const rows = await store.submissions(request.requestKey, now);
    return {
      requestUrl: `${this.base}/q/${requestId}`,
      requestRef: request.requestRef,
      label: settings.label,
      publicKey: request.publicKey,
      status: this.statusOf(request, now),
      maxSubmissions: request.maxSubmissions,
      createdAt: request.createdAt,
      expiresAt: request.expiresAt,
      allowFiles: request.allowFiles,
      allowedOrigins: settings.allowedOrigins,
      submissions: rows.map((row) => ({
        number: row.number, submittedAt: row.createdAt, size: row.size, state: this.stateOf(row), ephemeralKey: row.ephemeralKey, expiresAt: row.noteExpiresAt,
      })),
    };
  }

  /** A reveal of one submission (DECISIONS 13's key_check, views, receipts, webhooks), for the inbox's holder. */
  async open(inboxId: string, number: number, keyCheck: string | null, access?: RequestAccess): Promise<InboxOpenResult> {
    const { store, crypto, clock, notes } = this.options;
    const request = await this.findByInboxId(inboxId);
    const submission = await store.submission(request.requestKey, number, clock.now());
    if (!submission || !submission.noteActive) return { outcome: 'gone' };
    const uuid = crypto.openForInbox(request.keyId, inboxId, submission.uuidBox);
    const result = await notes.reveal(uuid, null, keyCheck, access, { withoutNoteId: true });
    if (result.outcome === 'key_required') return { outcome: 'key_required' };
    if (result.outcome === 'upload_incomplete') return { outcome: 'uploading' };
    if (result.outcome !== 'revealed') return { outcome: 'gone' };
    if (submission.openedAt === null) {
      await store.markOpened(request.requestKey, number, clock.now()).catch((err: unknown) => {
        this.options.logger.warn('a submission\'s opening was not recorded', { err: (err as Error).message });
      });
    }
    this.options.metrics?.opened();
    return {
      outcome: 'revealed', envelope: result.content, ephemeralKey: submission.ephemeralKey, number,
      currentViews: result.currentViews, maxViews: result.maxViews, destroyed: result.destroyed, ...(result.files ? { files: result.files } : {}),
    };
  }

  /** Closes the request early: it takes no more submissions; those made stay in the inbox. */
  async close(inboxId: string): Promise<void> {
    const request = await this.findByInboxId(inboxId);
    if (await this.options.store.close(request.requestKey, this.options.clock.now())) this.options.metrics?.closedEarly();
  }
}

export type { ExpiryType };

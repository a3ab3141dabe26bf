import type { Knex } from 'knex';
import type { Clock, ExpiryType, OutgoingMessage } from '@vanish/common';
import type { NewSubmission, RequestStore, StoredRequest, StoredSubmission } from '../../requests/ports';
import { DEFAULT_OPERATION_TIMEOUT_MS, withDatabase, type KnexStoreOptions } from './database-errors';

interface RequestRow {
  request_key: string;
  inbox_key: string;
  request_ref: string;
  key_id: string;
  public_key: string;
  inbox_seal_key: string;
  settings_box: Buffer;
  request_id_box: string;
  webhook_box: string | null;
  allow_files: number | boolean;
  expiry_type: string;
  expiry_hours: number;
  max_views: number;
  max_submissions: number;
  submissions: number;
  created_at: number | string;
  expires_at: number | string;
  closed_at: number | string | null;
}

interface SubmissionRow {
  number: number;
  note_lookup: string;
  uuid_box: string;
  ephemeral_key: string;
  size: number;
  created_at: number | string;
  note_expires_at: number | string;
  opened_at: number | string | null;
  note_live: string | null;
}

const time = (value: number | string) => new Date(Number(value));

function fromRow(row: RequestRow): StoredRequest {
  return {
    requestKey: row.request_key,
    inboxKey: row.inbox_key,
    requestRef: row.request_ref,
    keyId: row.key_id,
    publicKey: row.public_key,
    inboxSealKey: row.inbox_seal_key,
    settingsBox: Buffer.from(row.settings_box),
    requestIdBox: row.request_id_box,
    webhookBox: row.webhook_box,
    allowFiles: Boolean(Number(row.allow_files)),
    expiryType: row.expiry_type as ExpiryType,
    expiryHours: Number(row.expiry_hours),
    maxViews: Number(row.max_views),
    maxSubmissions: Number(row.max_submissions),
    submissions: Number(row.submissions),
    createdAt: time(row.created_at),
    expiresAt: time(row.expires_at),
    closedAt: row.closed_at === null ? null : time(row.closed_at),
  };
}

/** RequestStore on knex (SQLite or MySQL, same SQL). */
export class KnexRequestStore implements RequestStore {
  private readonly timeoutMs: number;

  constructor(private readonly knex: Knex, private readonly clock: Clock, options: KnexStoreOptions = {}) {
    this.timeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  }

  insert(request: StoredRequest): Promise<void> {
    return withDatabase(async () => {
      await this.knex('requests').insert({
        request_key: request.requestKey,
        inbox_key: request.inboxKey,
        request_ref: request.requestRef,
        key_id: request.keyId,
        public_key: request.publicKey,
        inbox_seal_key: request.inboxSealKey,
        settings_box: request.settingsBox,
        request_id_box: request.requestIdBox,
        webhook_box: request.webhookBox,
        allow_files: request.allowFiles,
        expiry_type: request.expiryType,
        expiry_hours: request.expiryHours,
        max_views: request.maxViews,
        max_submissions: request.maxSubmissions,
        submissions: request.submissions,
        created_at: request.createdAt.getTime(),
        expires_at: request.expiresAt.getTime(),
        closed_at: request.closedAt?.getTime() ?? null,
      });
    }, this.timeoutMs);
  }

  findByRequestKey(requestKey: string): Promise<StoredRequest | null> {
    return withDatabase(async () => {
      const row = await this.knex<RequestRow>('requests').where({ request_key: requestKey }).first();
      return row ? fromRow(row) : null;
    }, this.timeoutMs);
  }

  findByInboxKey(inboxKey: string): Promise<StoredRequest | null> {
    return withDatabase(async () => {
      const row = await this.knex<RequestRow>('requests').where({ inbox_key: inboxKey }).first();
      return row ? fromRow(row) : null;
    }, this.timeoutMs);
  }

  claimSlot(requestKey: string, now: Date): Promise<number | null> {
    return withDatabase(() => this.knex.transaction(async (trx) => {
      const changed = await trx('requests')
        .where({ request_key: requestKey })
        .whereNull('closed_at')
        .andWhere('expires_at', '>', now.getTime())
        .andWhere('submissions', '<', this.knex.ref('max_submissions'))
        .increment('submissions', 1);
      if (Number(changed) !== 1) return null;
      const row = await trx('requests').select('submissions').where({ request_key: requestKey }).first() as { submissions: number } | undefined;
      return row ? Number(row.submissions) : null;
    }), this.timeoutMs);
  }

  releaseSlot(requestKey: string): Promise<void> {
    return withDatabase(async () => {
      await this.knex('requests').where({ request_key: requestKey }).andWhere('submissions', '>', 0).decrement('submissions', 1);
    }, this.timeoutMs);
  }

  recordSubmission(submission: NewSubmission, messages: readonly OutgoingMessage[]): Promise<void> {
    return withDatabase(() => this.knex.transaction(async (trx) => {
      await trx('request_submissions').insert({
        request_key: submission.requestKey,
        number: submission.number,
        note_lookup: submission.noteLookup,
        uuid_box: submission.uuidBox,
        ephemeral_key: submission.ephemeralKey,
        size: submission.size,
        created_at: submission.createdAt.getTime(),
        note_expires_at: submission.noteExpiresAt.getTime(),
        opened_at: null,
      });
      if (messages.length > 0) {
        const createdAt = this.clock.now().getTime();
        await trx('outbox').insert(messages.map((m) => ({ id: m.id, routing_key: m.routingKey, body: m.body, created_at: createdAt })));
      }
    }), this.timeoutMs);
  }

  private submissionQuery(requestKey: string, now: Date) {
    const knex = this.knex;
    return knex('request_submissions as s')
      .leftJoin('notes as n', function join() {
        this.on('n.lookup', '=', 's.note_lookup').andOn('n.expires_at', '>', knex.raw('?', [now.getTime()]));
      })
      .select('s.number', 's.note_lookup', 's.uuid_box', 's.ephemeral_key', 's.size', 's.created_at', 's.note_expires_at', 's.opened_at', 'n.lookup as note_live')
      .where('s.request_key', requestKey);
  }

  submissions(requestKey: string, now: Date): Promise<StoredSubmission[]> {
    return withDatabase(async () => {
      const rows = await this.submissionQuery(requestKey, now).orderBy('s.number') as SubmissionRow[];
      return rows.map(submissionOf);
    }, this.timeoutMs);
  }

  submission(requestKey: string, number: number, now: Date): Promise<StoredSubmission | null> {
    return withDatabase(async () => {
      const row = await this.submissionQuery(requestKey, now).andWhere('s.number', number).first() as SubmissionRow | undefined;
      return row ? submissionOf(row) : null;
    }, this.timeoutMs);
  }

  markOpened(requestKey: string, number: number, now: Date): Promise<void> {
    return withDatabase(async () => {
      await this.knex('request_submissions').where({ request_key: requestKey, number }).whereNull('opened_at').update({ opened_at: now.getTime() });
    }, this.timeoutMs);
  }

  close(requestKey: string, now: Date): Promise<boolean> {
    return withDatabase(async () => {
      const changed = await this.knex('requests').where({ request_key: requestKey }).whereNull('closed_at').update({ closed_at: now.getTime() });
      return Number(changed) === 1;
    }, this.timeoutMs);
  }

  purgeEnded(before: Date, limit: number): Promise<number> {
    return withDatabase(async () => {
      const cutoff = before.getTime();
      const knex = this.knex;
      // Kept while any submission's note lives, so that an inbox never disappears before what it holds.
      const keys = (await knex('requests as r').select('r.request_key as request_key')
        .where((q) => q.where('r.expires_at', '<=', cutoff).orWhere('r.closed_at', '<=', cutoff))
        .whereNotExists(function live() {
          this.select(knex.raw('1')).from('request_submissions as s').join('notes as n', 'n.lookup', 's.note_lookup').whereRaw('s.request_key = r.request_key');
        })
        .limit(limit))
        .map((row: { request_key: string }) => row.request_key);
      if (keys.length === 0) return 0;
      await this.knex.transaction(async (trx) => {
        await trx('request_submissions').whereIn('request_key', keys).delete();
        await trx('requests').whereIn('request_key', keys).delete();
      });
      return keys.length;
    }, this.timeoutMs);
  }
}

function submissionOf(row: SubmissionRow): StoredSubmission {
  return {
    number: Number(row.number),
    noteLookup: row.note_lookup,
    uuidBox: row.uuid_box,
    ephemeralKey: row.ephemeral_key,
    size: Number(row.size),
    createdAt: time(row.created_at),
    noteExpiresAt: time(row.note_expires_at),
    openedAt: row.opened_at === null ? null : time(row.opened_at),
    noteActive: row.note_live !== null && row.note_live !== undefined,
  };
}

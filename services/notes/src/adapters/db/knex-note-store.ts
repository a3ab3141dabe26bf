import type { Knex } from 'knex';
import { AppError, GroupCommit, systemClock, type Clock, type ExpiryType, type OutgoingMessage } from '@vanish/common';
import type { ExpiredNote, NoteRecord, NoteState, NoteStore, NoteTransaction } from '../../domain/ports';
import { DEFAULT_OPERATION_TIMEOUT_MS, isDeadlock, translateDatabaseError, withDatabase, type KnexStoreOptions } from './database-errors';

interface NoteRow {
  lookup: string;
  note_ref: string;
  key_id: string;
  salt: Buffer;
  kdf: string | null;
  check_box: Buffer;
  content_box: Buffer;
  email_box: Buffer | null;
  has_passcode: number | boolean;
  expiry_type: string;
  max_views: number;
  current_views: number;
  failed_attempts: number;
  created_at: number | string;
  expires_at: number | string;
  webhook_box?: string | null;
}

const STATE_COLUMNS = ['note_ref', 'expiry_type', 'max_views', 'current_views', 'failed_attempts', 'expires_at', 'webhook_box'] as const;
const TRANSACTION_ATTEMPTS = 3;

interface NewNote {
  note: NoteRecord;
  messages: readonly OutgoingMessage[];
}

interface ActiveLookup {
  lookup: string;
  now: Date;
}

/**
 * Reads of single notes that arrive while one is under way are answered together by the next:
 * one primary-key `IN` query for up to 100 of them (SQLite's oldest limit of 999 bound values is
 * far off). Under load a read then costs the notes service and the database a share of one query
 * instead of one each; a lone read goes at once. Every caller gets a read that started after it
 * asked, so a note committed before the request is always seen.
 */
const READ_BATCH_OPTIONS = { maxItems: 100 };

/**
 * Creations committed together: at most 60 notes (60 × 16 bound values stays under SQLite's
 * oldest limit of 999) and about 2 MiB of ciphertext and messages, which inline as hex in the
 * SQL well below MariaDB's default max_allowed_packet (16 MiB). A batch the database refuses (a
 * constraint) is retried note by note, so one bad note fails alone; a batch that met an
 * unreachable or silent database (503) is not, as a retry would only wait again and a timed-out
 * transaction may still have committed.
 */
const GROUP_COMMIT_OPTIONS = {
  maxItems: 60,
  maxBytes: 2 * 1024 * 1024,
  sizeOf: ({ note, messages }: NewNote): number =>
    note.contentBox.length + note.checkBox.length + (note.emailBox?.length ?? 0) + messages.reduce((sum, m) => sum + m.body.length, 0),
  retryEachAlone: (err: unknown): boolean => !(err instanceof AppError && err.statusCode === 503),
};

/**
 * NoteStore on knex (SQLite or MySQL, same SQL). Counters only ever change through conditional
 * UPDATEs, so concurrent reveals across processes cannot overshoot max_views; destruction is a
 * DELETE, so ciphertext and sealed e-mail leave with the row.
 */
export class KnexNoteStore implements NoteStore {
  private readonly timeoutMs: number;
  private readonly creations: GroupCommit<NewNote>;
  private readonly activeReads: GroupCommit<ActiveLookup, NoteRecord | null>;

  constructor(private readonly knex: Knex, private readonly clock: Clock = systemClock, options: KnexStoreOptions = {}) {
    this.timeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
    this.creations = new GroupCommit((batch) => this.transaction(async (tx) => {
      await tx.insertAll(batch.map((entry) => entry.note));
      await tx.enqueue(batch.flatMap((entry) => entry.messages));
    }), GROUP_COMMIT_OPTIONS);
    this.activeReads = new GroupCommit((batch) => this.findActiveBatch(batch), READ_BATCH_OPTIONS);
  }

  insertNew(note: NoteRecord, messages: readonly OutgoingMessage[]): Promise<void> {
    return this.creations.add({ note, messages });
  }

  findActive(lookup: string, now: Date): Promise<NoteRecord | null> {
    return this.activeReads.add({ lookup, now });
  }

  /** One query for the batch; each caller's own `now` decides whether its note has expired. */
  private findActiveBatch(batch: readonly ActiveLookup[]): Promise<Array<NoteRecord | null>> {
    return withDatabase(async () => {
      const lookups = [...new Set(batch.map((item) => item.lookup))];
      const rows = await this.knex<NoteRow>('notes').whereIn('lookup', lookups);
      const byLookup = new Map(rows.map((row) => [row.lookup, row]));
      return batch.map(({ lookup, now }) => {
        const row = byLookup.get(lookup);
        return row && Number(row.expires_at) > now.getTime() ? toRecord(row) : null;
      });
    }, this.timeoutMs);
  }

  findExpired(now: Date, limit: number): Promise<ExpiredNote[]> {
    return withDatabase(async () => {
      const rows = await this.knex<NoteRow>('notes')
        .select('lookup', 'expiry_type')
        .where('expires_at', '<=', now.getTime())
        .orderBy('expires_at')
        .limit(limit);
      return rows.map((row) => ({ lookup: row.lookup, expiryType: row.expiry_type as ExpiryType }));
    }, this.timeoutMs);
  }

  transaction<T>(work: (tx: KnexNoteTransaction) => Promise<T>): Promise<T> {
    return withDatabase(async () => {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await this.knex.transaction((trx) => work(new KnexNoteTransaction(trx, this.clock)));
        } catch (err) {
          // The whole transaction rolled back, so running it again is safe.
          if (isDeadlock(err) && attempt < TRANSACTION_ATTEMPTS) continue;
          throw translateDatabaseError(err);
        }
      }
    }, this.timeoutMs);
  }

  /** True when the database answers `select 1` within the operation timeout (at most 5 s). */
  async ping(): Promise<boolean> {
    try {
      await withDatabase(() => this.knex.raw('select 1'), Math.min(this.timeoutMs || 5000, 5000));
      return true;
    } catch {
      return false;
    }
  }
}

class KnexNoteTransaction implements NoteTransaction {
  constructor(private readonly trx: Knex.Transaction, private readonly clock: Clock) {}

  async insert(note: NoteRecord): Promise<void> {
    await this.insertAll([note]);
  }

  /** One multi-row INSERT. */
  async insertAll(notes: readonly NoteRecord[]): Promise<void> {
    await this.trx('notes').insert(notes.map(toRow));
  }

  async claimView(lookup: string, now: Date): Promise<boolean> {
    const updated = await this.trx('notes')
      .where({ lookup })
      .andWhere('expires_at', '>', now.getTime())
      .andWhere('current_views', '<', this.trx.ref('max_views'))
      .increment('current_views', 1);
    return Number(updated) === 1;
  }

  async countFailedAttempt(lookup: string, now: Date): Promise<boolean> {
    const updated = await this.trx('notes')
      .where({ lookup })
      .andWhere('expires_at', '>', now.getTime())
      .increment('failed_attempts', 1);
    return Number(updated) === 1;
  }

  async lock(lookup: string): Promise<NoteState | null> {
    // A write that changes nothing still takes the row lock (MySQL) or the write lock (SQLite);
    // the read that follows (READ COMMITTED) then sees the latest committed counters.
    await this.trx('notes').where({ lookup }).update({ lookup });
    const row = await this.trx<NoteRow>('notes').select(...STATE_COLUMNS).where({ lookup }).first();
    if (!row) return null;
    return {
      noteRef: row.note_ref,
      expiryType: row.expiry_type as ExpiryType,
      maxViews: Number(row.max_views),
      currentViews: Number(row.current_views),
      failedAttempts: Number(row.failed_attempts),
      expiresAt: new Date(Number(row.expires_at)),
      webhookBox: row.webhook_box ?? null,
    };
  }

  async delete(lookup: string): Promise<boolean> {
    return Number(await this.trx('notes').where({ lookup }).delete()) === 1;
  }

  async enqueue(messages: readonly OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const createdAt = this.clock.now().getTime();
    await this.trx('outbox').insert(messages.map((m) => ({ id: m.id, routing_key: m.routingKey, body: m.body, created_at: createdAt })));
  }
}

function toRow(note: NoteRecord): NoteRow {
  return {
    lookup: note.lookup,
    note_ref: note.noteRef,
    key_id: note.keyId,
    salt: note.salt,
    kdf: note.kdf,
    check_box: note.checkBox,
    content_box: note.contentBox,
    email_box: note.emailBox,
    has_passcode: note.hasPasscode,
    expiry_type: note.expiryType,
    max_views: note.maxViews,
    current_views: note.currentViews,
    failed_attempts: note.failedAttempts,
    created_at: note.createdAt.getTime(),
    expires_at: note.expiresAt.getTime(),
    webhook_box: note.webhookBox ?? null,
  };
}

function toRecord(row: NoteRow): NoteRecord {
  return {
    lookup: row.lookup,
    noteRef: row.note_ref,
    keyId: row.key_id,
    salt: Buffer.from(row.salt),
    kdf: row.kdf,
    checkBox: Buffer.from(row.check_box),
    contentBox: Buffer.from(row.content_box),
    emailBox: row.email_box === null ? null : Buffer.from(row.email_box),
    hasPasscode: Boolean(Number(row.has_passcode)),
    expiryType: row.expiry_type as ExpiryType,
    maxViews: Number(row.max_views),
    currentViews: Number(row.current_views),
    failedAttempts: Number(row.failed_attempts),
    createdAt: new Date(Number(row.created_at)),
    expiresAt: new Date(Number(row.expires_at)),
    webhookBox: row.webhook_box ?? null,
  };
}

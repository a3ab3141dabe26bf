import type { Knex } from 'knex';
import {
  AppError, DependencyUnavailableError, GroupCommit, InternalError, ServiceUnavailableError, systemClock, type Clock, type ExpiryType, type OutgoingMessage,
} from '@vanish/common';
import type { DueRelease, ExpiredNote, NoteRecord, NoteState, NoteStore, NoteTimeControls, NoteTransaction, ReceiptEntry } from '../../domain/ports';
import type { IssuedDownload, NoteFile } from '../../files/ports';
import { receiptEventRow, receiptRowOf, type ReceiptRow } from './knex-receipt-store';
import { PlainInsert } from './plain-insert';
import { commitOnSqliteThread, isRolledBack, runStatements, runsOnSqliteThread, type Statement } from '@vanish/database';
import { committedRows, connectionOf, endConnection, type ServerConnection } from './commit-outcome';
import {
  DEFAULT_COMMIT_OUTCOME_TIMEOUT_MS, DEFAULT_OPERATION_TIMEOUT_MS, translateDatabaseError, withDatabase, type KnexStoreOptions,
} from './database-errors';
import { isConnectRefused, isDeadlock, isSafeToRetryTransaction, retryingTransaction } from '@vanish/database';

interface NoteRow {
  lookup: string;
  note_ref: string;
  key_id: string;
  salt: Buffer;
  kdf: string | null;
  check_box: Buffer;
  content_box: Buffer;
  email_box: Buffer | null;
  key_check_box: Buffer | null;
  receipt_box?: Buffer | null;
  has_passcode: number | boolean;
  expiry_type: string;
  max_views: number;
  current_views: number;
  failed_attempts: number;
  attempts_in_flight: number;
  attempts_reserved_until: number | string;
  created_at: number | string;
  expires_at: number | string;
  webhook_box?: string | null;
  shrink_minutes?: number | null;
  shrunk_at?: number | string | null;
  release_at?: number | string | null;
  silence_hours?: number | null;
  released_at?: number | string | null;
  release_mail?: string | null;
  file_count?: number;
  files_pending?: number;
}

/** The creation batch's INSERTs (every column of toRow, receiptRowOf and the outbox row). */
const INSERT_NOTES = new PlainInsert<NoteRow>('notes', [
  'lookup', 'note_ref', 'key_id', 'salt', 'kdf', 'check_box', 'content_box', 'email_box', 'key_check_box', 'receipt_box', 'has_passcode',
  'expiry_type', 'max_views', 'current_views', 'failed_attempts', 'attempts_in_flight', 'attempts_reserved_until', 'created_at', 'expires_at',
  'webhook_box', 'shrink_minutes', 'shrunk_at', 'release_at', 'silence_hours', 'released_at', 'release_mail', 'file_count', 'files_pending',
]);
interface NoteFileRow {
  object_name: string;
  note_lookup: string;
  note_ref: string;
  position: number;
  upload_key: string;
  size: number;
  state: string;
  created_at: number;
  hold_until: number;
}
const INSERT_NOTE_FILES = new PlainInsert<NoteFileRow>('note_files', [
  'object_name', 'note_lookup', 'note_ref', 'position', 'upload_key', 'size', 'state', 'created_at', 'hold_until',
]);
const INSERT_RECEIPTS = new PlainInsert<ReceiptRow>('receipts', [
  'receipt_key', 'note_ref', 'expiry_type', 'max_views', 'has_passcode', 'created_at', 'expires_at', 'ended_at', 'end_reason',
  'shrink_minutes', 'release_at', 'silence_hours', 'released_at',
]);
interface OutboxInsertRow {
  id: string;
  routing_key: string;
  body: string;
  created_at: number;
}
const INSERT_OUTBOX = new PlainInsert<OutboxInsertRow>('outbox', ['id', 'routing_key', 'body', 'created_at']);

const STATE_COLUMNS = [
  'note_ref', 'expiry_type', 'max_views', 'current_views', 'failed_attempts', 'attempts_in_flight', 'attempts_reserved_until', 'expires_at', 'webhook_box',
  'shrink_minutes', 'shrunk_at', 'release_at', 'silence_hours', 'released_at', 'release_mail',
] as const;
const MINUTE_MS = 60_000;

/** DECISIONS 16: released at `now` (no gate, or its time has come); a condition of every consuming UPDATE. */
function released(query: Knex.QueryBuilder, now: Date): Knex.QueryBuilder {
  return query.andWhere((q) => q.whereNull('release_at').orWhere('release_at', '<=', now.getTime()));
}
const TRANSACTION_ATTEMPTS = 3;
/** Before a creation batch runs again after a refused statement or a lost connection: the writer address moving. */
const RETRY_PAUSE_MS = 100;
/** Between two tries to learn an unconfirmed commit's outcome while the database cannot be asked. */
const UNCONFIRMED_COMMIT_RETRY_MS = 250;

interface NewNote {
  note: NoteRecord;
  messages: readonly OutgoingMessage[];
  /**
   * `waiting` until its batch sends COMMIT (`committing`), or until its caller's deadline passes
   * first (`abandoned`: answered 503, so it must never commit). Both changes happen synchronously,
   * so exactly one of them wins.
   */
  state: 'waiting' | 'committing' | 'abandoned';
  /** Resolves when the state becomes `abandoned`. */
  abandoned: Promise<void>;
}

/**
 * A batch that held a creation whose caller had already been answered 503: rolled back instead of
 * committed. The creations still wanted are retried alone (GROUP_COMMIT_OPTIONS).
 */
class AbandonedCreation extends DependencyUnavailableError {
  constructor() {
    super('database', 'Database did not answer in time');
  }
}

/**
 * A batch's COMMIT was sent and what the database kept could not be learned (or it kept part of the
 * batch): 500, and never retried item by item. A retry would find its creations already past their
 * COMMIT and could answer 200 for notes that were never stored.
 */
class UnconfirmedCommit extends InternalError {
  /**
   * 'database' when the outcome is unknown because the database could not be reached: that request is part
   * of the database's outage (logged once as an event, each request at debug), not an error of its own.
   */
  readonly dependency: string | undefined;

  constructor(cause: unknown, dependency?: string) {
    super(cause);
    this.dependency = dependency;
  }
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
 * constraint) is retried note by note, so one bad note fails alone, and so is a batch rolled back
 * for a creation answered 503 meanwhile; a batch that met an unreachable or silent database (503)
 * is not, as a retry would only wait again.
 */
const GROUP_COMMIT_OPTIONS = {
  maxItems: 60,
  maxBytes: 2 * 1024 * 1024,
  sizeOf: ({ note, messages }: NewNote): number =>
    note.contentBox.length + note.checkBox.length + (note.emailBox?.length ?? 0) + messages.reduce((sum, m) => sum + m.body.length, 0),
  retryEachAlone: (err: unknown): boolean =>
    err instanceof AbandonedCreation || !(err instanceof UnconfirmedCommit || (err instanceof AppError && err.statusCode === 503)),
};

/**
 * NoteStore on knex (SQLite or MySQL, same SQL). Counters only ever change through conditional
 * UPDATEs, so concurrent reveals across processes cannot overshoot max_views; destruction is a
 * DELETE, so ciphertext and sealed e-mail leave with the row.
 */
export class KnexNoteStore implements NoteStore {
  private readonly timeoutMs: number;
  private readonly commitOutcomeTimeoutMs: number;
  private readonly creations: GroupCommit<NewNote>;
  private readonly activeReads: GroupCommit<ActiveLookup, NoteRecord | null>;
  /** SQLite: a creation batch is one message to the database thread (commitOnSqliteThread). */
  private readonly commitsInOneMessage: boolean;

  constructor(private readonly knex: Knex, private readonly clock: Clock = systemClock, options: KnexStoreOptions = {}) {
    this.commitsInOneMessage = runsOnSqliteThread(knex);
    this.timeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
    this.commitOutcomeTimeoutMs = options.commitOutcomeTimeoutMs ?? DEFAULT_COMMIT_OUTCOME_TIMEOUT_MS;
    this.creations = new GroupCommit((batch) => this.commitCreations(batch), GROUP_COMMIT_OPTIONS);
    this.activeReads = new GroupCommit((batch) => this.findActiveBatch(batch), READ_BATCH_OPTIONS);
  }

  /**
   * Answers what the database kept (issue 19, item 11): a creation is answered 503 only while its
   * COMMIT has not been sent, and then it never commits (its batch rolls back). Once the COMMIT is
   * sent, the answer waits for its outcome, past the operation deadline; if that answer does not
   * come, the database is asked what it kept (see commitCreations).
   */
  insertNew(note: NoteRecord, messages: readonly OutgoingMessage[]): Promise<void> {
    let abandon!: () => void;
    const entry: NewNote = { note, messages, state: 'waiting', abandoned: new Promise((resolve) => { abandon = resolve; }) };
    const stored = this.creations.add(entry);
    if (!this.timeoutMs) return stored;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        if (entry.state !== 'waiting') return;
        entry.state = 'abandoned';
        abandon();
        reject(new DependencyUnavailableError('database', 'Database did not answer in time'));
      }, this.timeoutMs);
    });
    return Promise.race([stored, deadline]).finally(() => clearTimeout(timer));
  }

  /** One transaction for the batch's creations still wanted; see insertNew. */
  private async commitCreations(batch: readonly NewNote[]): Promise<void> {
    // A creation already past a COMMIT whose outcome is unknown must not be answered as stored.
    if (batch.some((entry) => entry.state === 'committing')) throw new UnconfirmedCommit(new Error('a creation whose commit outcome is unknown was committed again'));
    const entries = batch.filter((entry) => entry.state === 'waiting');
    if (entries.length === 0) return;
    for (let attempt = 1; ; attempt += 1) {
      let connection: ServerConnection | null = null;
      let commitSent = false;
      let outcomeTimer: NodeJS.Timeout | undefined;
      let commitSentAt = 0;
      let startOutcomeClock!: () => void;
      const outcomeLate = new Promise<'late'>((resolve) => {
        startOutcomeClock = () => {
          commitSentAt = Date.now();
          outcomeTimer = setTimeout(() => resolve('late'), this.commitOutcomeTimeoutMs);
        };
      });
      // Decided with no await before the COMMIT is sent, so no deadline can pass in between.
      const sendCommit = (): void => {
        if (entries.some((entry) => entry.state === 'abandoned')) throw new AbandonedCreation();
        for (const entry of entries) entry.state = 'committing';
        commitSent = true;
        startOutcomeClock();
      };
      const notes = entries.map((entry) => entry.note);
      const messages = entries.flatMap((entry) => entry.messages);
      const transaction = this.commitsInOneMessage
        // SQLite: the batch's BEGIN, INSERTs and COMMIT in one message to the database thread (the COMMIT is sent with them).
        ? commitOnSqliteThread(this.knex, creationStatements(notes, messages, this.clock), sendCommit)
        : this.knex.transaction(async (trx) => {
          connection = await connectionOf(this.knex, trx);
          const tx = new KnexNoteTransaction(trx, this.clock);
          await tx.insertAllAndEnqueue(notes, messages);
          sendCommit();
        });
      // A transaction stuck before its COMMIT (a dead connection) must not hold up the creations
      // after it: once every caller has been answered 503, the next batch goes (on another
      // connection), and this one rolls back if it ever resumes.
      const allAbandoned = Promise.all(entries.map((entry) => entry.abandoned)).then(() => 'abandoned' as const);
      try {
        const outcome = await Promise.race([transaction, outcomeLate, allAbandoned]);
        if (outcome === 'abandoned') transaction.catch(() => undefined);
        if (outcome !== 'late') return;
      } catch (err) {
        if (commitSent && isRolledBack(err)) {
          // Sent with its COMMIT in one message (SQLite) and rolled back there (a refused INSERT): nothing was
          // kept, as when a statement fails before the COMMIT is sent, and it is handled as such.
          for (const entry of entries) entry.state = 'waiting';
          commitSent = false;
        }
        // A database that refuses connections answers 503 at once (isConnectRefused): no pause, no retry.
        const again = attempt < TRANSACTION_ATTEMPTS && isSafeToRetryTransaction(err, commitSent) && !isConnectRefused(err);
        if (!commitSent) {
          // Rolled back for sure (a deadlock, a Galera node without quorum, a connection lost before COMMIT).
          if (again && !entries.some((entry) => entry.state === 'abandoned')) {
            if (!isDeadlock(err)) await new Promise((resolve) => setTimeout(resolve, RETRY_PAUSE_MS * attempt));
            if (!entries.some((entry) => entry.state === 'abandoned')) continue;
          }
          throw translateDatabaseError(err);
        }
        if (again) {
          // A Galera certification conflict at COMMIT (1213): refused on every node, nothing kept. The
          // creations wait for their next COMMIT again (their callers' deadlines apply until it is sent).
          for (const entry of entries) entry.state = 'waiting';
          continue;
        }
        // The COMMIT was sent and then the connection failed: it may have committed.
      } finally {
        clearTimeout(outcomeTimer);
      }
      transaction.catch(() => undefined); // ended below, if it still runs
      return this.settleUnconfirmedCommit(entries, connection, commitSentAt);
    }
  }

  /**
   * A COMMIT was sent and its answer did not come: end its connection (MySQL), then look for the
   * batch's notes. All there: committed, the callers get their notes. None there: rolled back
   * for good, 503. While the database cannot be asked (down, or a failover moving the writer
   * address), it is asked again until the outcome wait (commitOutcomeTimeoutMs) since the COMMIT
   * was sent has passed; only then is the answer 500, the outcome unknown. So a connection cut
   * at its COMMIT during a failover gets the new primary's answer, and no creation waits longer
   * than it did before for an answer that will not come.
   */
  private async settleUnconfirmedCommit(entries: readonly NewNote[], connection: ServerConnection | null, commitSentAt: number): Promise<void> {
    const lookups = entries.map((entry) => entry.note.lookup);
    const giveUpAt = commitSentAt + this.commitOutcomeTimeoutMs;
    let ended = connection === null;
    let found: string[];
    for (;;) {
      try {
        if (!ended) {
          await withDatabase(() => endConnection(this.knex, connection!, this.timeoutMs || 5000), this.timeoutMs);
          ended = true;
        }
        found = (await withDatabase(() => committedRows<{ lookup: string }>(this.knex, this.knex('notes').whereIn('lookup', lookups).select('lookup')), this.timeoutMs))
          .map((row) => row.lookup);
        break;
      } catch (err) {
        if (!(err instanceof ServiceUnavailableError) || Date.now() + UNCONFIRMED_COMMIT_RETRY_MS > giveUpAt) {
          throw new UnconfirmedCommit(new Error(`the outcome of a creation commit is unknown (${(err as Error).message})`), err instanceof ServiceUnavailableError ? 'database' : undefined);
        }
        await new Promise((resolve) => setTimeout(resolve, UNCONFIRMED_COMMIT_RETRY_MS));
      }
    }
    if (found.length === lookups.length) return;
    if (found.length === 0) throw new DependencyUnavailableError('database', 'Database did not confirm the commit; nothing was stored');
    throw new UnconfirmedCommit(new Error('a creation commit kept part of its batch'));
  }

  reserveAttempt(lookup: string, now: Date, limit: number, until: Date): Promise<boolean> {
    return withDatabase(async () => {
      const updated = await released(this.knex('notes')
        .where({ lookup })
        .andWhere('expires_at', '>', now.getTime()), now)
        .andWhereRaw('?? + ?? < ?', ['failed_attempts', 'attempts_in_flight', limit])
        .update({ attempts_in_flight: this.knex.raw('?? + 1', ['attempts_in_flight']), attempts_reserved_until: until.getTime() });
      return Number(updated) === 1;
    }, this.timeoutMs);
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

  findDueReleases(now: Date, limit: number): Promise<DueRelease[]> {
    return withDatabase(async () => {
      const rows = await this.knex<NoteRow>('notes')
        .select('lookup')
        .where('release_at', '<=', now.getTime())
        .whereNull('released_at')
        .andWhere('expires_at', '>', now.getTime())
        .orderBy('release_at')
        .limit(limit);
      return rows.map((row) => ({ lookup: row.lookup }));
    }, this.timeoutMs);
  }

  transaction<T>(work: (tx: KnexNoteTransaction) => Promise<T>): Promise<T> {
    // A transaction that kept nothing (a deadlock or certification conflict, a Galera node without
    // quorum, a connection lost before COMMIT) runs again; withDatabase translates what remains.
    const giveUpAt = this.timeoutMs ? Date.now() + this.timeoutMs : undefined;
    return withDatabase(
      () => retryingTransaction(this.knex, (trx) => work(new KnexNoteTransaction(trx, this.clock)), TRANSACTION_ATTEMPTS, { giveUpAt }),
      this.timeoutMs,
    );
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
    await runStatements(this.trx, insertStatements(notes));
  }

  /** A creation batch's rows, the notes and their outbox messages, in one runStatements (MySQL: one after another). */
  async insertAllAndEnqueue(notes: readonly NoteRecord[], messages: readonly OutgoingMessage[]): Promise<void> {
    await runStatements(this.trx, creationStatements(notes, messages, this.clock));
  }

  async filesOf(lookup: string): Promise<NoteFile[]> {
    const rows = await this.trx<NoteFileRow>('note_files').select('object_name', 'position', 'size', 'state').where({ note_lookup: lookup }).orderBy('position');
    return rows.map(noteFileOf);
  }

  async issueDownloads(lookup: string, noteRef: string, downloads: readonly IssuedDownload[], expiresAt: Date): Promise<void> {
    if (downloads.length === 0) return;
    await this.trx('note_file_downloads').insert(downloads.map((download) => ({
      download_key: download.downloadKey, object_name: download.objectName, note_ref: noteRef, size: download.size, expires_at: expiresAt.getTime(),
    })));
    // The bytes stay for the download window even when this reveal (or anything after it) ends the note.
    await this.trx('note_files').where({ note_lookup: lookup }).andWhere('hold_until', '<', expiresAt.getTime()).update({ hold_until: expiresAt.getTime() });
  }

  async claimView(lookup: string, now: Date): Promise<boolean> {
    const at = now.getTime();
    // DECISIONS 16: the shrink is decided by the same UPDATE that claims the first view. The
    // assignments read current_views before it is counted: MariaDB evaluates SET left to right (a
    // later assignment sees an earlier one's value), SQLite reads the old row, so the increment
    // goes last and the shrink's conditions never read a column this statement changed.
    const shrinks = '?? = 0 and ?? is not null';
    const updated = await released(this.trx('notes')
      .where({ lookup })
      .andWhere('expires_at', '>', at), now)
      .andWhere('current_views', '<', this.trx.ref('max_views'))
      // DECISIONS 14: never while a file is still being uploaded.
      .andWhere('files_pending', 0)
      .update({
        shrunk_at: this.trx.raw(`case when ${shrinks} then ? else ?? end`, ['current_views', 'shrink_minutes', at, 'shrunk_at']),
        expires_at: this.trx.raw(`case when ${shrinks} and ?? > ? + ?? * ? then ? + ?? * ? else ?? end`, [
          'current_views', 'shrink_minutes', 'expires_at', at, 'shrink_minutes', MINUTE_MS, at, 'shrink_minutes', MINUTE_MS, 'expires_at',
        ]),
        current_views: this.trx.raw('?? + 1', ['current_views']),
      });
    return Number(updated) === 1;
  }

  async markReleased(lookup: string, now: Date): Promise<boolean> {
    const updated = await this.trx('notes')
      .where({ lookup })
      .andWhere('release_at', '<=', now.getTime())
      .whereNull('released_at')
      .update({ released_at: now.getTime() });
    return Number(updated) === 1;
  }

  async checkIn(lookup: string, now: Date, next: Date): Promise<boolean> {
    const updated = await this.trx('notes')
      .where({ lookup })
      .whereNotNull('silence_hours')
      .andWhere('release_at', '>', now.getTime())
      .andWhere('expires_at', '>', now.getTime())
      .update({ release_at: next.getTime() });
    return Number(updated) === 1;
  }

  async countFailedAttempt(lookup: string, now: Date): Promise<boolean> {
    const updated = await released(this.trx('notes')
      .where({ lookup })
      .andWhere('expires_at', '>', now.getTime()), now)
      .update({
        failed_attempts: this.trx.raw('?? + 1', ['failed_attempts']),
        attempts_in_flight: this.trx.raw('case when ?? > 0 then ?? - 1 else 0 end', ['attempts_in_flight', 'attempts_in_flight']),
      });
    return Number(updated) === 1;
  }

  async refundAttempt(lookup: string): Promise<void> {
    await this.trx('notes').where({ lookup }).andWhere('attempts_in_flight', '>', 0).decrement('attempts_in_flight', 1);
  }

  async countAbandonedAttempts(lookup: string, count: number): Promise<void> {
    await this.trx('notes').where({ lookup }).andWhere('attempts_in_flight', '>=', count).update({
      failed_attempts: this.trx.raw('?? + ?', ['failed_attempts', count]),
      attempts_in_flight: this.trx.raw('?? - ?', ['attempts_in_flight', count]),
    });
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
      attemptsInFlight: Number(row.attempts_in_flight),
      attemptsReservedUntil: new Date(Number(row.attempts_reserved_until)),
      expiresAt: new Date(Number(row.expires_at)),
      webhookBox: row.webhook_box ?? null,
      controls: controlsOf(row),
    };
  }

  async delete(lookup: string): Promise<boolean> {
    return Number(await this.trx('notes').where({ lookup }).delete()) === 1;
  }

  async recordReceipt(entries: readonly ReceiptEntry[]): Promise<void> {
    if (entries.length === 0) return;
    // Only notes that have a receipt get timeline rows (a row without its receipt would never be purged).
    const refs = [...new Set(entries.map((entry) => entry.noteRef))];
    const withReceipt = new Set((await this.trx('receipts').select('note_ref').whereIn('note_ref', refs)).map((row: { note_ref: string }) => row.note_ref));
    const rows = entries.filter((entry) => withReceipt.has(entry.noteRef));
    if (rows.length === 0) return;
    await this.trx('receipt_events').insert(rows.map(receiptEventRow));
    for (const entry of rows) {
      if (entry.kind === 'end') {
        await this.trx('receipts').where({ note_ref: entry.noteRef }).whereNull('ended_at').update({ ended_at: entry.at.getTime(), end_reason: entry.reason });
      } else if (entry.kind === 'shrink') {
        await this.trx('receipts').where({ note_ref: entry.noteRef }).update({ expires_at: entry.expiresAt.getTime() });
      } else if (entry.kind === 'checkin') {
        await this.trx('receipts').where({ note_ref: entry.noteRef }).update({ release_at: entry.releaseAt.getTime() });
      } else if (entry.kind === 'release') {
        await this.trx('receipts').where({ note_ref: entry.noteRef }).whereNull('released_at').update({ released_at: entry.announcedAt.getTime() });
      }
    }
  }

  async enqueue(messages: readonly OutgoingMessage[]): Promise<void> {
    const statement = enqueueStatement(messages, this.clock);
    if (statement) await runStatements(this.trx, [statement]);
  }
}

/** The INSERTs of new notes: their rows, their receipts, their files. */
function insertStatements(notes: readonly NoteRecord[]): Statement[] {
  const statements = [
    INSERT_NOTES.statement(notes.map(toRow)),
    INSERT_RECEIPTS.statement(notes.filter((note) => note.receiptKey !== undefined).map(receiptRowOf)),
    INSERT_NOTE_FILES.statement(notes.flatMap((note) => (note.files ?? []).map((file) => ({
      object_name: file.objectName,
      note_lookup: note.lookup,
      note_ref: note.noteRef,
      position: file.position,
      upload_key: file.uploadKey,
      size: file.size,
      state: 'uploading',
      created_at: note.createdAt.getTime(),
      hold_until: 0,
    })))),
  ];
  return statements.filter((statement): statement is Statement => statement !== null);
}

/** The outbox rows of these messages (null for none). */
function enqueueStatement(messages: readonly OutgoingMessage[], clock: Clock): Statement | null {
  const createdAt = clock.now().getTime();
  return INSERT_OUTBOX.statement(messages.map((m) => ({ id: m.id, routing_key: m.routingKey, body: m.body, created_at: createdAt })));
}

/** A creation batch's statements: the notes' INSERTs, then their outbox messages'. */
function creationStatements(notes: readonly NoteRecord[], messages: readonly OutgoingMessage[], clock: Clock): Statement[] {
  const statements = insertStatements(notes);
  const outbox = enqueueStatement(messages, clock);
  if (outbox) statements.push(outbox);
  return statements;
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
    key_check_box: note.keyCheckBox ?? null,
    receipt_box: note.receiptBox ?? null,
    has_passcode: note.hasPasscode,
    expiry_type: note.expiryType,
    max_views: note.maxViews,
    current_views: note.currentViews,
    failed_attempts: note.failedAttempts,
    attempts_in_flight: note.attemptsInFlight,
    attempts_reserved_until: note.attemptsReservedUntil.getTime(),
    created_at: note.createdAt.getTime(),
    expires_at: note.expiresAt.getTime(),
    webhook_box: note.webhookBox ?? null,
    shrink_minutes: note.controls?.shrinkMinutes ?? null,
    shrunk_at: note.controls?.shrunkAt?.getTime() ?? null,
    release_at: note.controls?.releaseAt?.getTime() ?? null,
    silence_hours: note.controls?.silenceHours ?? null,
    released_at: note.controls?.releasedAt?.getTime() ?? null,
    release_mail: note.controls?.releaseMail ?? null,
    file_count: note.files?.length ?? 0,
    files_pending: note.files?.length ?? 0,
  };
}

function optionalDate(value: number | string | null | undefined): Date | null {
  return value === null || value === undefined ? null : new Date(Number(value));
}

function optionalNumber(value: number | string | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** DECISIONS 16's columns of a note row. */
function controlsOf(row: Partial<NoteRow>): NoteTimeControls {
  return {
    shrinkMinutes: optionalNumber(row.shrink_minutes),
    shrunkAt: optionalDate(row.shrunk_at),
    releaseAt: optionalDate(row.release_at),
    silenceHours: optionalNumber(row.silence_hours),
    releasedAt: optionalDate(row.released_at),
    releaseMail: row.release_mail ?? null,
  };
}

export function noteFileOf(row: Pick<NoteFileRow, 'object_name' | 'position' | 'size' | 'state'>): NoteFile {
  return { objectName: row.object_name, position: Number(row.position), size: Number(row.size), state: row.state === 'complete' ? 'complete' : 'uploading' };
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
    keyCheckBox: row.key_check_box === null || row.key_check_box === undefined ? null : Buffer.from(row.key_check_box),
    receiptBox: row.receipt_box ? Buffer.from(row.receipt_box) : null,
    hasPasscode: Boolean(Number(row.has_passcode)),
    expiryType: row.expiry_type as ExpiryType,
    maxViews: Number(row.max_views),
    currentViews: Number(row.current_views),
    failedAttempts: Number(row.failed_attempts),
    attemptsInFlight: Number(row.attempts_in_flight),
    attemptsReservedUntil: new Date(Number(row.attempts_reserved_until)),
    createdAt: new Date(Number(row.created_at)),
    expiresAt: new Date(Number(row.expires_at)),
    webhookBox: row.webhook_box ?? null,
    controls: controlsOf(row),
    fileCount: Number(row.file_count ?? 0),
    filesPending: Number(row.files_pending ?? 0),
  };
}

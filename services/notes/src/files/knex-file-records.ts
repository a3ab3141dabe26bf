import type { Knex } from 'knex';
import type { ClientClass } from '../domain/ports';
import { DEFAULT_OPERATION_TIMEOUT_MS, withDatabase } from '../adapters/db/database-errors';
import { noteFileOf } from '../adapters/db/knex-note-store';
import { receiptEventRow } from '../adapters/db/knex-receipt-store';
import type { DownloadRecord, FileRecords, NoteFile, UploadRecord } from './ports';

/** Download starts kept on one note's receipt: a bound on what a holder of a download address can write. */
export const MAX_DOWNLOADS_PER_NOTE = 200;

/** FileRecords on knex (SQLite or MySQL, same SQL): the note_files and note_file_downloads tables. */
export class KnexFileRecords implements FileRecords {
  private readonly timeoutMs: number;

  constructor(private readonly knex: Knex, options: { operationTimeoutMs?: number } = {}) {
    this.timeoutMs = options.operationTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  }

  findUpload(uploadKey: string, now: Date): Promise<UploadRecord | null> {
    return withDatabase(async () => {
      const row = await this.knex('note_files')
        .join('notes', 'notes.lookup', 'note_files.note_lookup')
        .select('note_files.object_name as object_name', 'note_files.size as size', 'note_files.state as state', 'note_files.created_at as created_at')
        .where('note_files.upload_key', uploadKey)
        .andWhere('notes.expires_at', '>', now.getTime())
        .first() as { object_name: string; size: number | string; state: string; created_at: number | string } | undefined;
      if (!row) return null;
      return { objectName: row.object_name, size: Number(row.size), state: row.state === 'complete' ? 'complete' : 'uploading', createdAt: new Date(Number(row.created_at)) };
    }, this.timeoutMs);
  }

  markComplete(objectName: string): Promise<boolean> {
    return withDatabase(() => this.knex.transaction(async (trx) => {
      const row = await trx('note_files').select('note_lookup').where({ object_name: objectName }).first() as { note_lookup: string } | undefined;
      if (!row) return false;
      const changed = Number(await trx('note_files').where({ object_name: objectName, state: 'uploading' }).update({ state: 'complete' }));
      if (changed !== 1) return false;
      await trx('notes').where({ lookup: row.note_lookup }).andWhere('files_pending', '>', 0).decrement('files_pending', 1);
      return true;
    }), this.timeoutMs);
  }

  filesOf(noteLookup: string): Promise<NoteFile[]> {
    return withDatabase(async () => {
      const rows = await this.knex('note_files').select('object_name', 'position', 'size', 'state').where({ note_lookup: noteLookup }).orderBy('position');
      return rows.map(noteFileOf);
    }, this.timeoutMs);
  }

  findDownload(downloadKey: string): Promise<DownloadRecord | null> {
    return withDatabase(async () => {
      const row = await this.knex('note_file_downloads').where({ download_key: downloadKey }).first() as
        { object_name: string; note_ref: string; size: number | string; expires_at: number | string } | undefined;
      if (!row) return null;
      return { objectName: row.object_name, noteRef: row.note_ref, size: Number(row.size), expiresAt: new Date(Number(row.expires_at)) };
    }, this.timeoutMs);
  }

  recordDownload(noteRef: string, at: Date, client: ClientClass): Promise<void> {
    return withDatabase(async () => {
      const receipt = await this.knex('receipts').select('note_ref').where({ note_ref: noteRef }).first();
      if (!receipt) return;
      const [{ n }] = await this.knex('receipt_events').where({ note_ref: noteRef, kind: 'file_download' }).count({ n: '*' }) as Array<{ n: number | string }>;
      if (Number(n) >= MAX_DOWNLOADS_PER_NOTE) return;
      await this.knex('receipt_events').insert(receiptEventRow({ noteRef, at, kind: 'file_download', client }));
    }, this.timeoutMs);
  }

  endedObjects(now: Date, limit: number): Promise<string[]> {
    return withDatabase(async () => {
      const rows = await this.knex('note_files')
        .leftJoin('notes', 'notes.lookup', 'note_files.note_lookup')
        .select('note_files.object_name as object_name')
        .whereNull('notes.lookup')
        .andWhere('note_files.hold_until', '<=', now.getTime())
        .limit(limit) as Array<{ object_name: string }>;
      return rows.map((row) => row.object_name);
    }, this.timeoutMs);
  }

  abandonedNotes(before: Date, limit: number): Promise<string[]> {
    return withDatabase(async () => {
      const rows = await this.knex('note_files')
        .distinct('note_lookup')
        .where({ state: 'uploading' })
        .andWhere('created_at', '<=', before.getTime())
        .limit(limit) as Array<{ note_lookup: string }>;
      return rows.map((row) => row.note_lookup);
    }, this.timeoutMs);
  }

  knownObjects(names: readonly string[]): Promise<Set<string>> {
    return withDatabase(async () => {
      const known = new Set<string>();
      for (let start = 0; start < names.length; start += 500) {
        const rows = await this.knex('note_files').select('object_name').whereIn('object_name', names.slice(start, start + 500)) as Array<{ object_name: string }>;
        for (const row of rows) known.add(row.object_name);
      }
      return known;
    }, this.timeoutMs);
  }

  forget(objectName: string): Promise<void> {
    return withDatabase(() => this.knex.transaction(async (trx) => {
      await trx('note_files').where({ object_name: objectName }).delete();
    }), this.timeoutMs);
  }

  purgeDownloads(before: Date): Promise<number> {
    return withDatabase(async () => Number(await this.knex('note_file_downloads').where('expires_at', '<=', before.getTime()).delete()), this.timeoutMs);
  }

  totals(): Promise<{ bytesStored: number; uploadsInProgress: number }> {
    return withDatabase(async () => {
      const rows = await this.knex('note_files').select('state').sum({ bytes: 'size' }).count({ n: '*' }).groupBy('state') as
        Array<{ state: string; bytes: number | string | null; n: number | string }>;
      const complete = rows.find((row) => row.state === 'complete');
      const uploading = rows.find((row) => row.state === 'uploading');
      return { bytesStored: Number(complete?.bytes ?? 0), uploadsInProgress: Number(uploading?.n ?? 0) };
    }, this.timeoutMs);
  }
}

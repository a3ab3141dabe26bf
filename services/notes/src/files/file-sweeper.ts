import type { Clock, Logger, OutgoingMessage } from '@vanish/common';
import { noteEventMessage, notifyObserver, type NoteEventsObserver } from '../domain/note-events';
import type { NoteWebhooks } from '../domain/note-webhooks';
import type { NoteStore } from '../domain/ports';
import type { FilesMetrics } from '../notes-metrics';
import type { FileRecords } from './ports';
import type { FileStorage } from './storage/ports';

/** An object with no row at all is left this long: its creation may still be committing (or failing). */
export const ORPHAN_GRACE_MS = 10 * 60_000;
/** How often the whole store is listed for orphans (the database-driven deletions run at every sweep). */
export const DEFAULT_STORE_SCAN_INTERVAL_MS = 15 * 60_000;
/** Expired download rows are kept this long, so that a late download answers 410 rather than 404. */
export const DOWNLOAD_ROW_RETENTION_MS = 24 * 3_600_000;

export interface FileSweepResult {
  /** Notes ended because their uploads were not complete within FILE_UPLOAD_WINDOW_HOURS. */
  abandoned: number;
  /** Objects deleted because their note ended (after the download window). */
  ended: number;
  /** Objects deleted that no note knows (a creation that never committed; anything left behind). */
  orphans: number;
}

export interface FileSweeperOptions {
  storage: FileStorage;
  records: FileRecords;
  notes: NoteStore;
  clock: Clock;
  uploadWindowHours: number;
  logger: Logger;
  events?: NoteEventsObserver;
  webhooks?: Pick<NoteWebhooks, 'attach'>;
  metrics?: FilesMetrics;
  storeScanIntervalMs?: number;
  batchSize?: number;
}

/**
 * Gone means gone (DECISIONS 14). Runs in the expiry sweeper's schedule, and at once after any note
 * ends in this process (reapSoon):
 * - a note whose uploads are not all complete FILE_UPLOAD_WINDOW_HOURS after its creation ends
 *   (`note.expired`, reason `retention`: unread, as a view note past its retention);
 * - the bytes of every note that ended, for whatever reason and through whichever process (the
 *   note's row is gone), are deleted once the download window of its last reveal has passed;
 * - the store itself is listed, and every object no note knows is deleted.
 * Each deletion is idempotent, so replicas sweeping at once only repeat each other.
 */
export class FileSweeper {
  private readonly batchSize: number;
  private readonly scanIntervalMs: number;
  private lastScanAt = Number.NEGATIVE_INFINITY;
  private reaping: Promise<number> | undefined;
  private reapAgain = false;

  constructor(private readonly options: FileSweeperOptions) {
    this.batchSize = options.batchSize ?? 100;
    this.scanIntervalMs = options.storeScanIntervalMs ?? DEFAULT_STORE_SCAN_INTERVAL_MS;
  }

  /** One full sweep; the store is listed when `scanStore` says so, else when its interval has passed. */
  async sweepOnce(options: { scanStore?: boolean } = {}): Promise<FileSweepResult> {
    const now = this.options.clock.now();
    const abandoned = await this.endAbandoned(now);
    const ended = await this.reapEnded();
    await this.options.records.purgeDownloads(new Date(now.getTime() - DOWNLOAD_ROW_RETENTION_MS));
    let orphans = 0;
    if (options.scanStore ?? Date.now() - this.lastScanAt >= this.scanIntervalMs) {
      orphans = await this.deleteOrphans(now);
      this.lastScanAt = Date.now();
    }
    this.options.metrics?.sweeps.inc();
    await this.updateGauges();
    if (abandoned + ended + orphans > 0) this.options.logger.info('file sweep deleted stored files', { abandonedNotes: abandoned, ended, orphans });
    return { abandoned, ended, orphans };
  }

  /** Deletes the bytes of ended notes now (after a note ended in this process); never throws. */
  reapSoon(): void {
    if (this.reaping) {
      this.reapAgain = true;
      return;
    }
    this.reaping = this.reapEnded()
      .catch((err: unknown) => {
        this.options.logger.warn('deleting the files of an ended note failed; the next sweep retries', { err: (err as Error).message });
        return 0;
      })
      .finally(() => {
        this.reaping = undefined;
        if (this.reapAgain) {
          this.reapAgain = false;
          this.reapSoon();
        }
      });
  }

  /** Resolves when a reap started by reapSoon has finished (tests; the takedown command). */
  async settled(): Promise<void> {
    while (this.reaping) await this.reaping;
  }

  /** The bytes of every note that is gone and whose download window has passed. */
  async reapEnded(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const names = await this.options.records.endedObjects(this.options.clock.now(), this.batchSize);
      for (const name of names) {
        await this.options.storage.delete(name);
        await this.options.records.forget(name);
        deleted += 1;
      }
      if (names.length < this.batchSize) break;
    }
    if (deleted > 0) this.options.metrics?.objectsSwept.inc({ reason: 'ended' }, deleted);
    return deleted;
  }

  private async endAbandoned(now: Date): Promise<number> {
    const before = new Date(now.getTime() - this.options.uploadWindowHours * 3_600_000);
    let ended = 0;
    let objects = 0;
    for (const lookup of await this.options.records.abandonedNotes(before, this.batchSize)) {
      const messages = await this.options.notes.transaction(async (tx) => {
        const state = await tx.lock(lookup);
        if (!state || !(await tx.delete(lookup))) return null;
        let out: OutgoingMessage[] = [noteEventMessage('note.expired', { note_id: state.noteRef, reason: 'retention', was_read: state.currentViews > 0 }, now)];
        if (this.options.webhooks) out = this.options.webhooks.attach(out, { uuid: null, access: null, target: state.webhookBox ?? null });
        await tx.enqueue(out);
        await tx.recordReceipt([{ noteRef: state.noteRef, at: now, kind: 'end', reason: 'retention' }]);
        return out;
      });
      if (messages) {
        ended += 1;
        notifyObserver(this.options.events, messages);
      }
      // The note's row is gone (now, or already): its parts go with it.
      for (const file of await this.options.records.filesOf(lookup)) {
        await this.options.storage.delete(file.objectName);
        await this.options.records.forget(file.objectName);
        objects += 1;
      }
    }
    if (objects > 0) this.options.metrics?.objectsSwept.inc({ reason: 'abandoned' }, objects);
    return ended;
  }

  private async deleteOrphans(now: Date): Promise<number> {
    const cutoff = now.getTime() - ORPHAN_GRACE_MS;
    let deleted = 0;
    let batch: Array<{ name: string; modifiedAt: Date }> = [];
    const flush = async () => {
      const known = await this.options.records.knownObjects(batch.map((object) => object.name));
      for (const object of batch) {
        if (known.has(object.name) || object.modifiedAt.getTime() > cutoff) continue;
        await this.options.storage.delete(object.name);
        deleted += 1;
      }
      batch = [];
    };
    for await (const object of this.options.storage.list()) {
      batch.push({ name: object.name, modifiedAt: object.modifiedAt });
      if (batch.length >= 500) await flush();
    }
    if (batch.length > 0) await flush();
    if (deleted > 0) this.options.metrics?.objectsSwept.inc({ reason: 'orphan' }, deleted);
    return deleted;
  }

  private async updateGauges(): Promise<void> {
    if (!this.options.metrics) return;
    const totals = await this.options.records.totals();
    this.options.metrics.bytesStored.set(totals.bytesStored);
    this.options.metrics.uploadsInProgress.set(totals.uploadsInProgress);
  }
}

import { DependencyUnavailableError, ValidationError, type Clock, type Logger } from '@vanish/common';
import type { ClientClass } from '../domain/ports';
import { GoneError, PayloadTooLargeError } from './errors';
import { FILE_TOKEN, type FileTokens } from './file-tokens';
import type { DownloadRecord, FileRecords, IssuedDownload, NewNoteFile, NoteFile, UploadRecord } from './ports';
import type { FileStorage } from './storage/ports';

/** The limits of DECISIONS 14 (FILE_MAX_BYTES, FILE_MAX_COUNT, FILE_UPLOAD_WINDOW_HOURS, FILE_DOWNLOAD_WINDOW_MINUTES). */
export interface FileLimits {
  maxBytes: number;
  maxCount: number;
  uploadWindowHours: number;
  downloadWindowMinutes: number;
}

export const DEFAULT_FILE_LIMITS: FileLimits = { maxBytes: 1024 ** 3, maxCount: 20, uploadWindowHours: 24, downloadWindowMinutes: 15 };

/** What a creation with files stores with its note and answers. */
export interface PreparedFiles {
  records: NewNoteFile[];
  /** Upload tokens in position order, each with its declared size (answered once, never stored). */
  uploads: Array<{ token: string; size: number }>;
}

/** Told of what happens to files, for metrics. */
export interface FileEventsObserver {
  uploadCompleted?(size: number): void;
  bytesIn?(bytes: number): void;
  bytesOut?(bytes: number): void;
}

export interface FileServiceOptions {
  storage: FileStorage;
  records: FileRecords;
  tokens: FileTokens;
  clock: Clock;
  limits: FileLimits;
  publicBaseUrl: string;
  logger: Logger;
  observer?: FileEventsObserver;
}

/**
 * Files of notes (DECISIONS 14) as the rest of the notes service sees them: creation declares sizes and
 * gets upload addresses (the uploads pre-created in the store before the note is stored, so a store that
 * fails leaves no note, and the note's transaction never waits for the store); uploads find their object
 * by the keyed hash of their token; reveals hand out download addresses; downloads find their file the
 * same way. Bytes never pass through here: FileStorage and the tus server move them as streams.
 */
export class FileService {
  readonly limits: FileLimits;
  private readonly publicBaseUrl: string;

  constructor(private readonly options: FileServiceOptions) {
    this.limits = options.limits;
    this.publicBaseUrl = options.publicBaseUrl.replace(/\/+$/, '');
  }

  get storage(): FileStorage {
    return this.options.storage;
  }

  /** The limits: FILE_MAX_COUNT (400 INVALID_FILES), FILE_MAX_BYTES (413 FILES_TOO_LARGE). */
  checkLimits(sizes: readonly number[]): void {
    if (sizes.length > this.limits.maxCount) {
      throw new ValidationError('INVALID_FILES', `A note carries at most ${this.limits.maxCount} files`, { parameter: 'files' });
    }
    const total = sizes.reduce((sum, size) => sum + size, 0);
    if (total > this.limits.maxBytes) {
      throw new PayloadTooLargeError('FILES_TOO_LARGE', `The files of a note may hold at most ${this.limits.maxBytes} bytes in all`, { parameter: 'files' });
    }
  }

  /**
   * Pre-creates one empty upload per declared size in the store. When the store fails, what was created
   * is deleted again and the creation answers 503: nothing half-stored remains.
   */
  async prepare(sizes: readonly number[]): Promise<PreparedFiles> {
    this.checkLimits(sizes);
    const { tokens, storage } = this.options;
    const prepared: PreparedFiles = { records: [], uploads: [] };
    try {
      for (const [position, size] of sizes.entries()) {
        const token = tokens.newToken();
        const objectName = tokens.newObjectName();
        prepared.records.push({ objectName, position, uploadKey: tokens.keyOf('upload', token), size });
        prepared.uploads.push({ token, size });
        await storage.createUpload(objectName, size);
      }
    } catch (err) {
      await this.discard(prepared.records);
      throw new DependencyUnavailableError('file storage', 'The file store did not take the uploads; nothing was stored, retry shortly', err);
    }
    return prepared;
  }

  /** Deletes the objects of a creation that was not stored (best effort; the sweep catches the rest). */
  async discard(records: readonly NewNoteFile[]): Promise<void> {
    await Promise.all(records.map((record) => this.options.storage.delete(record.objectName).catch((err: unknown) => {
      this.options.logger.warn('an upload of a creation that failed could not be deleted yet; the sweep will', { err: (err as Error).message });
    })));
  }

  uploadUrl(token: string): string {
    return `${this.publicBaseUrl}/files/uploads/${token}`;
  }

  downloadUrl(token: string): string {
    return `${this.publicBaseUrl}/files/d/${token}`;
  }

  /** The upload a token opens while its note lives, or null (unknown, malformed, note gone). */
  async findUpload(token: string): Promise<UploadRecord | null> {
    if (!FILE_TOKEN.test(token)) return null;
    return this.options.records.findUpload(this.options.tokens.keyOf('upload', token), this.options.clock.now());
  }

  /** The store holds every declared byte: the upload is complete (idempotent). */
  async completed(upload: UploadRecord): Promise<void> {
    if (await this.options.records.markComplete(upload.objectName)) this.options.observer?.uploadCompleted?.(upload.size);
  }

  /** New download addresses for the files of a reveal, in position order. */
  newDownloads(files: readonly NoteFile[]): { issued: IssuedDownload[]; urls: Array<{ url: string; size: number }>; expiresAt: Date } {
    const { tokens } = this.options;
    const issued: IssuedDownload[] = [];
    const urls: Array<{ url: string; size: number }> = [];
    for (const file of files) {
      const token = tokens.newToken();
      issued.push({ downloadKey: tokens.keyOf('download', token), objectName: file.objectName, size: file.size });
      urls.push({ url: this.downloadUrl(token), size: file.size });
    }
    const expiresAt = new Date(this.options.clock.now().getTime() + this.limits.downloadWindowMinutes * 60_000);
    return { issued, urls, expiresAt };
  }

  /**
   * The file a download token opens: 404 NOT_FOUND for a token that names none, 410 DOWNLOAD_EXPIRED
   * once its window has passed.
   */
  async findDownload(token: string): Promise<DownloadRecord | null> {
    if (!FILE_TOKEN.test(token)) return null;
    const found = await this.options.records.findDownload(this.options.tokens.keyOf('download', token));
    if (!found) return null;
    if (found.expiresAt.getTime() <= this.options.clock.now().getTime()) {
      throw new GoneError('DOWNLOAD_EXPIRED', 'This download address has expired; reveal the note again if it has views left');
    }
    return found;
  }

  /** A download started: the note's receipt shows it (time and client class). Never fails the download. */
  async downloadStarted(download: DownloadRecord, client: ClientClass): Promise<void> {
    try {
      await this.options.records.recordDownload(download.noteRef, this.options.clock.now(), client);
    } catch (err) {
      this.options.logger.warn('receipt: file download not recorded', { err: (err as Error).message });
    }
  }

  observeBytesIn(bytes: number): void {
    if (bytes > 0) this.options.observer?.bytesIn?.(bytes);
  }

  observeBytesOut(bytes: number): void {
    if (bytes > 0) this.options.observer?.bytesOut?.(bytes);
  }
}

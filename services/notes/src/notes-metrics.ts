import { Counter, Gauge, type Registry } from '@vanish/common';
import type { NoteEventsObserver } from './domain/note-events';
import type { ScryptLimit } from './domain/scrypt-limit';
import type { FileEventsObserver } from './files/file-service';

export interface NotesMetrics {
  /** Hooked into NoteService and ExpirySweeper: counts every committed note event. */
  observer: NoteEventsObserver;
  /** 1 while the database is usable (migrated and answering), else 0. */
  databaseUp: Gauge<string>;
  /** Reports the passcode KDF cap's running and waiting derivations at each scrape. */
  watchScryptLimit(limit: ScryptLimit): void;
  /** DECISIONS 14: files. */
  files: FilesMetrics;
}

/** The file metrics (DECISIONS 14): sizes and counts only, never a token, an object name or a note. */
export interface FilesMetrics {
  /** Told by the file service: upload bytes received, download bytes sent, uploads completed. */
  observer: FileEventsObserver;
  /** Set by each sweep from the database: bytes of complete uploads, uploads not complete yet. */
  bytesStored: Gauge<string>;
  uploadsInProgress: Gauge<string>;
  /** One per sweep run; objects deleted by the sweep, by why (`ended`, `abandoned`, `orphan`). */
  sweeps: Counter<string>;
  objectsSwept: Counter<'reason'>;
}

/**
 * The notes service's own metrics on the injected registry (never the global one). Labels are
 * small fixed sets (expiry type, event, reason): no uuid, note reference or address ever.
 */
export function createNotesMetrics(registry: Registry): NotesMetrics {
  const created = new Counter({
    name: 'notes_created_total',
    help: 'Notes created, by expiry type',
    labelNames: ['expiry_type'] as const,
    registers: [registry],
  });
  const accessed = new Counter({ name: 'notes_accessed_total', help: 'Successful reveals (views counted)', registers: [registry] });
  const failedAccess = new Counter({ name: 'notes_failed_access_total', help: 'Reveals refused for a wrong passcode', registers: [registry] });
  const ended = new Counter({
    name: 'notes_ended_total',
    help: 'Notes destroyed or expired, by event and reason',
    labelNames: ['event', 'reason'] as const,
    registers: [registry],
  });
  const databaseUp = new Gauge({ name: 'notes_database_up', help: '1 while the notes database is migrated and answering', registers: [registry] });
  for (const type of ['view', 'time', 'both']) created.inc({ expiry_type: type }, 0);

  let scryptLimit: ScryptLimit | undefined;
  new Gauge({
    name: 'notes_scrypt_running',
    help: 'Passcode KDF derivations running (capped by SCRYPT_MAX_CONCURRENT)',
    registers: [registry],
    collect() { this.set(scryptLimit?.running ?? 0); },
  });
  new Gauge({
    name: 'notes_scrypt_queued',
    help: 'Passcode KDF derivations waiting for a slot (beyond SCRYPT_MAX_QUEUED they answer 503)',
    registers: [registry],
    collect() { this.set(scryptLimit?.queued ?? 0); },
  });

  const bytesIn = new Counter({ name: 'notes_file_bytes_in_total', help: 'File upload bytes received (tus PATCH bodies stored)', registers: [registry] });
  const bytesOut = new Counter({ name: 'notes_file_bytes_out_total', help: 'File download bytes sent', registers: [registry] });
  const uploadsCompleted = new Counter({ name: 'notes_file_uploads_completed_total', help: 'File uploads that received every declared byte', registers: [registry] });
  const objectsSwept = new Counter({
    name: 'notes_file_objects_swept_total',
    help: 'Stored file objects deleted: ended (their note ended), abandoned (upload window passed), orphan (no note at all)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['ended', 'abandoned', 'orphan']) objectsSwept.inc({ reason }, 0);
  const files: FilesMetrics = {
    observer: {
      bytesIn: (bytes) => bytesIn.inc(bytes),
      bytesOut: (bytes) => bytesOut.inc(bytes),
      uploadCompleted: () => uploadsCompleted.inc(),
    },
    bytesStored: new Gauge({ name: 'notes_file_bytes_stored', help: 'Bytes of complete file uploads in the store (as of the last sweep)', registers: [registry] }),
    uploadsInProgress: new Gauge({ name: 'notes_file_uploads_in_progress', help: 'File uploads declared and not complete yet (as of the last sweep)', registers: [registry] }),
    sweeps: new Counter({ name: 'notes_file_sweeps_total', help: 'Runs of the file sweep (ended, abandoned and orphan objects)', registers: [registry] }),
    objectsSwept,
  };

  return {
    files,
    databaseUp,
    watchScryptLimit(limit) {
      scryptLimit = limit;
    },
    observer: {
      noteEvent(event, data) {
        switch (event) {
          case 'note.created':
            created.inc({ expiry_type: data.expiry_type ?? 'unknown' });
            break;
          case 'note.accessed':
            accessed.inc();
            break;
          case 'note.failed_access':
            failedAccess.inc();
            break;
          default:
            ended.inc({ event, reason: data.reason ?? 'unknown' });
        }
      },
    },
  };
}

import { createReadStream } from 'node:fs';
import { constants } from 'node:fs';
import { access, mkdir, readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { FileStore } from '@tus/file-store';
import { Upload, type DataStore } from '@tus/utils';
import { ConfigError } from '@vanish/common';
import { assertObjectName, isObjectName } from './object-names';
import { StoredObjectNotFoundError, StoredRangeError, type FileStorage, type StoredObject } from './ports';

/**
 * The embedded default (DECISIONS 14): files under one folder (DATA_DIR/files), written by
 * @tus/file-store. Each object is two files: `NAME` (the bytes received so far, written at their
 * offsets) and `NAME.json` (the tus upload record with the declared length). An object is complete
 * when `NAME` holds the declared length. Memory stays bounded: reads and writes are streams.
 */
/**
 * @tus/file-store makes its folder from its constructor with a callback that throws (uncaught) when mkdir
 * fails, e.g. when the folder is removed at that moment (a test's temporary DATA_DIR). FsFileStorage.open
 * has made the folder already, awaited, so that step is skipped here.
 */
class PreparedFileStore extends FileStore {}
(PreparedFileStore.prototype as unknown as { checkOrCreateDirectory(): void }).checkOrCreateDirectory = () => undefined;

/**
 * A download is read in pieces of this size (fs's default is 64 KiB: four times the file-system calls and stream
 * steps per byte). 1 MiB pieces cost notes about 1.5 CPU s more per GiB when the reader was slow (as a distant
 * client is), now that their Buffers are freed every few MB (TransferScavenger); 256 KiB pieces cost about what
 * 64 KiB pieces do then, and about what 1 MiB pieces do for a fast reader (docs/performance.md, files).
 */
const READ_BYTES = 256 * 1024;

export class FsFileStorage implements FileStorage {
  readonly kind = 'fs' as const;
  private readonly store: FileStore;

  private constructor(readonly directory: string) {
    this.store = new PreparedFileStore({ directory });
  }

  /**
   * `directory` is created (0700) when missing. A folder that cannot be made or written is a configuration
   * problem, said as one at start-up (naming the settings to change), not an error at the first upload.
   */
  static async open(directory: string): Promise<FsFileStorage> {
    try {
      await mkdir(directory, { recursive: true, mode: 0o700 });
      await access(directory, constants.W_OK | constants.X_OK);
    } catch (err) {
      const message = (err as { message?: unknown } | null)?.message;
      const reason = typeof message === 'string' ? message : String(err);
      throw new ConfigError([
        `DATA_DIR: files are kept in ${directory} (FILE_STORAGE=fs), which cannot be created or written (${reason}): ` +
        'set DATA_DIR to a writable folder (a volume, in a container), or FILE_STORAGE=s3 (docs/files.md)',
      ]);
    }
    return new FsFileStorage(directory);
  }

  tusDataStore(): DataStore {
    return this.store;
  }

  async createUpload(name: string, size: number): Promise<void> {
    assertObjectName(name);
    if (!Number.isSafeInteger(size) || size < 1) throw new RangeError('an upload declares a whole number of bytes, at least 1');
    await this.store.create(new Upload({ id: name, size, offset: 0, creation_date: new Date().toISOString() }));
  }

  async read(name: string, range?: { start: number; end: number }): Promise<Readable> {
    const object = await this.stat(name);
    if (object === null || !object.complete) throw new StoredObjectNotFoundError(name, object !== null);
    if (range !== undefined) checkRange(range, object.size);
    return createReadStream(this.dataPath(name), { highWaterMark: READ_BYTES, ...(range && { start: range.start, end: range.end }) });
  }

  async stat(name: string): Promise<StoredObject | null> {
    assertObjectName(name);
    const [data, info] = await Promise.all([statOrNull(this.dataPath(name)), statOrNull(this.infoPath(name))]);
    if (data === null && info === null) return null;
    const declared = info === null ? undefined : await this.declaredSize(name);
    const size = data?.size ?? 0;
    const modifiedAt = new Date(Math.max(data?.mtimeMs ?? 0, info?.mtimeMs ?? 0));
    return { name, size, complete: declared !== undefined && data !== null && size === declared, modifiedAt };
  }

  async delete(name: string): Promise<void> {
    assertObjectName(name);
    // The record last: an object whose bytes are gone but whose record is left is still listed (and swept).
    await rm(this.dataPath(name), { force: true });
    await rm(this.infoPath(name), { force: true });
  }

  async *list(): AsyncIterable<StoredObject> {
    let entries: string[];
    try {
      entries = await readdir(this.directory);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const names = new Set<string>();
    for (const entry of entries) {
      const name = entry.endsWith('.json') ? entry.slice(0, -'.json'.length) : entry;
      if (isObjectName(name)) names.add(name);
    }
    for (const name of [...names].sort()) {
      const object = await this.stat(name);
      if (object !== null) yield object;
    }
  }

  async close(): Promise<void> {
    // Nothing is held open between calls.
  }

  private dataPath(name: string): string {
    return join(this.directory, name);
  }

  private infoPath(name: string): string {
    return join(this.directory, `${name}.json`);
  }

  private async declaredSize(name: string): Promise<number | undefined> {
    try {
      const record = JSON.parse(await readFile(this.infoPath(name), 'utf8')) as { size?: unknown };
      return typeof record.size === 'number' ? record.size : undefined;
    } catch {
      return undefined; // unreadable or half-written record: the object is not complete
    }
  }
}

export function checkRange(range: { start: number; end: number }, size: number): void {
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end >= size) {
    throw new StoredRangeError(range, size);
  }
}

async function statOrNull(path: string): Promise<{ size: number; mtimeMs: number } | null> {
  try {
    const s = await stat(path);
    return s.isFile() ? { size: s.size, mtimeMs: s.mtimeMs } : null;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

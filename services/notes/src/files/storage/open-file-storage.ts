import { FsFileStorage } from './fs-file-storage';
import type { FileStorage } from './ports';
import { S3FileStorage } from './s3-file-storage';
import type { FileStorageSettings } from './settings';

/** The adapter FILE_STORAGE names (the composition root calls this once). */
export async function openFileStorage(settings: FileStorageSettings): Promise<FileStorage> {
  if (settings.kind === 'fs') return FsFileStorage.open(settings.directory);
  const { kind: _kind, ...s3 } = settings;
  return new S3FileStorage(s3);
}

import { FsFileStorage } from './fs-file-storage';
import type { FileStorage } from './ports';
import type { FileStorageSettings } from './settings';

/**
 * The adapter FILE_STORAGE names (the composition root calls this once). The S3 adapter is loaded only when
 * chosen: the AWS SDK and tus's S3 store cost a process about 7 MB of heap (the all-in-one keeps files on disk).
 */
export async function openFileStorage(settings: FileStorageSettings): Promise<FileStorage> {
  if (settings.kind === 'fs') return FsFileStorage.open(settings.directory);
  const { kind: _kind, ...s3 } = settings;
  const { S3FileStorage } = await import('./s3-file-storage');
  return new S3FileStorage(s3);
}

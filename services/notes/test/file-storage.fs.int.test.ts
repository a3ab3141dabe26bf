import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsFileStorage } from '../src/files/storage/fs-file-storage';
import { fileStorageContract } from './contract/file-storage.contract';

fileStorageContract('the local file system', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'vanish-files-'));
  const directory = join(dataDir, 'files');
  const storage = await FsFileStorage.open(directory);
  return {
    storage,
    contents: async () => (await readdir(directory)).sort(),
    close: async () => {
      await storage.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
});

import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@vanish/common';
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

describe('the local file system, when its folder cannot be made', () => {
  it('when DATA_DIR is not a folder, then opening is a configuration problem that names DATA_DIR and FILE_STORAGE', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'vanish-files-'));
    const notAFolder = join(dataDir, 'data');
    await writeFile(notAFolder, 'a file where the folder should be');
    try {
      const opened = FsFileStorage.open(join(notAFolder, 'files'));
      await expect(opened).rejects.toBeInstanceOf(ConfigError);
      await expect(opened).rejects.toThrow(/DATA_DIR: files are kept in .*\/data\/files \(FILE_STORAGE=fs\), which cannot be created or written \(ENOTDIR.*FILE_STORAGE=s3/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '@vanish/testkit/mariadb';
import { FsFileStorage } from '../src/files/storage/fs-file-storage';
import { filesContract } from './contract/files.contract';

filesContract('MariaDB and a file-system store', () => createTestDatabase('vanish_files'), async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-files-store-'));
  const storage = await FsFileStorage.open(dir);
  return { storage, inspect: storage, close: async () => { await storage.close(); rmSync(dir, { recursive: true, force: true }); } };
});

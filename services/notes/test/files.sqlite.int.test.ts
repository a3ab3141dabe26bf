import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsFileStorage } from '../src/files/storage/fs-file-storage';
import { filesContract } from './contract/files.contract';

// SQLite and the embedded default storage: the service opens DATA_DIR/files itself; the test reads the same folder.
filesContract('SQLite and the file system under DATA_DIR', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-files-db-'));
  return { url: `sqlite:${join(dir, 'notes.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
}, async (dataDir) => {
  const inspect = await FsFileStorage.open(join(dataDir, 'files'));
  return { inspect, close: () => inspect.close() };
});

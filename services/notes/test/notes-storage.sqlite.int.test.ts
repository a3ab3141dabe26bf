import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { notesStorageContract } from './contract/notes-storage.contract';

notesStorageContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-notes-'));
  return {
    url: `sqlite:${join(dir, 'notes.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

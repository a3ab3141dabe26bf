import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { receiptsContract } from './contract/receipts.contract';

receiptsContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-receipts-'));
  return {
    url: `sqlite:${join(dir, 'notes.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

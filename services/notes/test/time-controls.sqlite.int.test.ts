import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timeControlsContract } from './contract/time-controls.contract';

timeControlsContract('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-time-controls-'));
  return {
    url: `sqlite:${join(dir, 'notes.db')}`,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}, { twoPools: false });

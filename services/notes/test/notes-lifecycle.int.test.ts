import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@vanish/common';
import { createNotesService, loadNotesConfig } from '../src';
import { postJson, send } from './support/api-client';

/** STYLE H13: stop() lets the request in flight finish, then refuses new ones; start/stop are idempotent. */
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');

describe('notes service lifecycle', () => {
  it('when stop() is called while a create is in flight, then that request completes with 200 and new ones are refused', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'notes-life-'));
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`,
    });
    // Production scrypt cost: a passcode note takes long enough to still be in flight when stop() starts.
    const service = await createNotesService(config, { logger: silentLogger });
    try {
      const first = await service.start();
      expect(await service.start()).toEqual(first);
      const base = `http://127.0.0.1:${first.port}`;
      const inFlight = postJson(base, { content: 'finish me', passcode: 'slow on purpose' });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const stopping = service.stop();
      expect((await inFlight).status).toBe(200);
      await stopping;
      await expect(send(base, 'GET', '/api/openapi.json')).rejects.toThrow(/ECONNREFUSED/);
      await expect(send(`http://127.0.0.1:${first.adminPort}`, 'GET', '/healthz', { unchecked: true })).rejects.toThrow(/ECONNREFUSED/);
      await service.stop();
    } finally {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('when a service is stopped without having started, then it releases its pool and does not hang', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'notes-life-'));
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`,
    });
    const service = await createNotesService(config, { logger: silentLogger });
    await service.stop();
    expect(service.isMigrated()).toBe(false);
    rmSync(dataDir, { recursive: true, force: true });
  });
});

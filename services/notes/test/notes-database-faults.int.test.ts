import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@vanish/common';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { waitFor } from '@vanish/testkit/net';
import { SERVICES } from '@vanish/testkit/services';
import { createNotesService, loadNotesConfig, type NotesService } from '../src';
import { LogCapture, postJson, send, type Answer } from './support/api-client';

/**
 * The notes service with MariaDB behind a TCP fault proxy: the database cut while serving, and
 * down when the service starts. It answers 503 in the error shape (no stack, no SQL), /readyz is
 * red, and it recovers by itself when the database returns.
 */
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');

function expectUnavailable(answer: Answer): void {
  expect(answer.status).toBe(503);
  expect(answer.json).toEqual({
    error: expect.any(String), code: 'SERVICE_UNAVAILABLE', details: { parameter: null, message: answer.json.error },
  });
  expect(answer.headers['retry-after']).toMatch(/^\d+$/);
  expect(answer.text).not.toMatch(/ECONN|PROTOCOL|select|insert|update|knex|mysql|\bat \S+:\d+|sqlite|\.ts\b/i);
}

describe('notes API when the database fails', () => {
  let db: TestDatabase;
  let proxy: FaultProxy;
  let service: NotesService | undefined;
  let dataDir: string;
  let logs: LogCapture;

  const startService = async (operationTimeoutMs?: number) => {
    logs = new LogCapture();
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir,
      DATABASE_URL: `mysql://root@127.0.0.1:${proxy.port}/${db.name}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`, SWEEP_INTERVAL_MS: '3600000',
    });
    service = await createNotesService(config, {
      logger: createLogger('notes', 'info', logs),
      migrationRetry: { initialDelayMs: 100, maxDelayMs: 400 },
      operationTimeoutMs,
    });
    const { port, adminPort } = await service.start();
    return { base: `http://127.0.0.1:${port}`, admin: `http://127.0.0.1:${adminPort}` };
  };

  beforeAll(async () => {
    db = await createTestDatabase('vanish_notes_faults');
    dataDir = mkdtempSync(join(tmpdir(), 'notes-faults-'));
  });

  beforeEach(async () => {
    proxy = await startFaultProxy({ targetHost: SERVICES.mariadb.host, targetPort: SERVICES.mariadb.port });
  });

  afterEach(async () => {
    await service?.stop();
    service = undefined;
    await proxy.close();
  });

  afterAll(async () => {
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when the database is cut while serving, then 503 within 2 s and /readyz 503; restored, then 200 again without a restart', async () => {
    const { base, admin } = await startService();
    const created = await postJson(base, { content: 'before the cut' });
    expect(created.status).toBe(200);

    proxy.cut();
    const create = await postJson(base, { content: 'during the cut' });
    expectUnavailable(create);
    expect(create.ms).toBeLessThan(2000);
    const view = await send(base, 'GET', `/api/view/${created.json.uuid}.php`);
    expectUnavailable(view);
    expect(view.ms).toBeLessThan(2000);
    const ready = await send(admin, 'GET', '/readyz', { unchecked: true });
    expect(ready.status).toBe(503);
    expect(ready.json.checks).toEqual({ database: 'failing' });
    expect((await send(admin, 'GET', '/healthz', { unchecked: true })).status).toBe(200);
    expect((await send(base, 'GET', '/api/openapi.json')).status).toBe(200);

    proxy.restore();
    const again = await waitFor(async () => {
      const answer = await postJson(base, { content: 'after the cut' });
      return answer.status === 200 ? answer : undefined;
    }, { timeoutMs: 15_000, description: 'create succeeds after the database returns' });
    expect(again.json.uuid).toBeDefined();
    expect((await send(base, 'GET', `/api/view/${created.json.uuid}.php`)).status).toBe(200);
    await waitFor(async () => (await send(admin, 'GET', '/readyz', { unchecked: true })).status === 200, { timeoutMs: 15_000, description: '/readyz 200' });
    expect(logs.text()).not.toContain(created.json.uuid);
  });

  it('when the database is down at start, then the service starts anyway, answers 503 and retries with a log line, and comes up when it returns', async () => {
    proxy.cut();
    const { base, admin } = await startService();
    expect((await send(admin, 'GET', '/healthz', { unchecked: true })).status).toBe(200);
    expect((await send(admin, 'GET', '/readyz', { unchecked: true })).status).toBe(503);
    expectUnavailable(await postJson(base, { content: 'too early' }));
    expectUnavailable(await send(base, 'GET', '/api/view/3b1f2c4d-5e6f-4a0b-8c1d-2e3f4a5b6c7d.php'));
    await waitFor(() => logs.lines.filter((line) => line.includes('database not reachable; retrying in')).length >= 2, {
      timeoutMs: 10_000, description: 'repeated retry log lines',
    });
    expect(logs.text()).toMatch(/"level":"warn".*database not reachable; retrying in/);

    proxy.restore();
    await waitFor(async () => (await send(admin, 'GET', '/readyz', { unchecked: true })).status === 200, { timeoutMs: 15_000, description: '/readyz 200' });
    expect(logs.text()).toContain('database ready');
    expect((await postJson(base, { content: 'now it works' })).status).toBe(200);
  });

  it('when the database connection stalls, then requests answer 503 at the operation deadline instead of hanging', async () => {
    const { base } = await startService(1000);
    expect((await postJson(base, { content: 'ok' })).status).toBe(200);
    proxy.stall();
    const answer = await postJson(base, { content: 'stalled' });
    expectUnavailable(answer);
    expect(answer.ms).toBeGreaterThanOrEqual(900);
    proxy.restore();
    await waitFor(async () => (await postJson(base, { content: 'flowing again' })).status === 200, {
      timeoutMs: 15_000, description: 'create succeeds after the stall ends',
    });
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, silentLogger } from '@vanish/common';
import { InProcessBus } from '@vanish/bus';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { waitFor } from '@vanish/testkit/net';
import { SERVICES } from '@vanish/testkit/services';
import { createStatsService, loadStatsConfig, type StatsModule } from '../src';

/**
 * Every line a service writes is JSON (one log pipeline, strict parsers). A database cut used to
 * make knex print `Connection Error: Error: read ECONNRESET` on the console as a bare line. Here
 * the stats service runs on MariaDB behind the fault proxy; its logger and everything written to
 * the console, stdout and stderr meanwhile are captured, and each line must parse as JSON.
 */
describe('stats logs when its database is cut', () => {
  let db: TestDatabase;
  let proxy: FaultProxy;
  let service: StatsModule | undefined;
  let dataDir: string;
  const lines: string[] = [];
  const restore: Array<() => void> = [];

  const capture = (text: string) => lines.push(...text.split('\n').filter((line) => line.trim() !== ''));

  beforeAll(async () => {
    db = await createTestDatabase('vanish_stats_logs');
    dataDir = mkdtempSync(join(tmpdir(), 'stats-logs-'));
    proxy = await startFaultProxy({ targetHost: SERVICES.mariadb.host, targetPort: SERVICES.mariadb.port });
    for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
      const spy = jest.spyOn(console, method).mockImplementation((...args: unknown[]) => capture(args.map(String).join(' ')));
      restore.push(() => spy.mockRestore());
    }
    for (const stream of [process.stdout, process.stderr]) {
      const original = stream.write.bind(stream);
      stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        capture(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof stream.write;
      restore.push(() => { stream.write = original as typeof stream.write; });
    }
  });

  afterAll(async () => {
    await service?.stop();
    for (const undo of restore) undo();
    await proxy?.close();
    await db?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when the database connection is reset under the service and comes back, then every captured line is JSON, the driver\'s words included', async () => {
    const sink = new Writable({ write(chunk: Buffer, _encoding, callback) { capture(chunk.toString('utf8')); callback(); } });
    const config = loadStatsConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `mysql://root@127.0.0.1:${proxy.port}/${db.name}`,
    });
    service = await createStatsService(config, {
      logger: createLogger('stats', 'debug', sink as unknown as Parameters<typeof createLogger>[2]),
      bus: new InProcessBus({ logger: silentLogger }),
    });
    const { port } = await service.start();
    const stats = () => fetch(`http://127.0.0.1:${port}/api/stats.php`).then((answer) => answer.status);
    expect(await stats()).toBe(200);

    proxy.cut(); // RST on the pooled connection: the driver reports it when the pool next hands it out
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxy.restore();
    await waitFor(async () => (await stats()) === 200, { timeoutMs: 20_000, intervalMs: 200, description: 'stats answers again' });
    await waitFor(() => lines.some((line) => /ECONNRESET|Connection Error|connection lost/i.test(line)), {
      timeoutMs: 10_000, description: 'the driver said something about the lost connection',
    });

    const bare = lines.filter((line) => {
      try {
        return typeof JSON.parse(line) !== 'object';
      } catch {
        return true;
      }
    });
    expect(bare).toEqual([]);
    const driverLine = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((entry) => /ECONNRESET|Connection Error/i.test(String(entry.detail)));
    expect(driverLine).toMatchObject({ service: 'stats', category: 'stats/db', level: 'warn' });
  });
});

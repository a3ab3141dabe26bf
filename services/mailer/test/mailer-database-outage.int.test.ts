import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@vanish/common';
import { InProcessBus } from '@vanish/bus';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { SERVICES } from '@vanish/testkit/services';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { loadMailerConfig } from '../src/config';
import { createMailerService, type MailerService } from '../src/compose';

// Issue 37: the mailer's unsubscribe page answered a database outage 500 INTERNAL_ERROR, logged as a
// failed request each time. It is a 503 SERVICE_UNAVAILABLE in the error shape, fast, and the outage
// is one error line when it goes and one info line when it is back.
jest.setTimeout(60_000);

type Line = { level: string; msg: string; [field: string]: unknown };

describe('mailer: its database goes away under the unsubscribe page', () => {
  let db: TestDatabase;
  let proxy: FaultProxy;
  let mailer: MailerService;
  let bus: InProcessBus;
  let base: string;
  let dataDir: string;
  const logged: Line[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('vanish_mailer_outage');
    proxy = await startFaultProxy({ targetHost: SERVICES.mariadb.host, targetPort: SERVICES.mariadb.port });
    dataDir = mkdtempSync(join(tmpdir(), 'mailer-outage-'));
    const logger = createLogger('mailer', 'info', { write: (line: string) => { logged.push(JSON.parse(line) as Line); } } as never);
    bus = new InProcessBus();
    const config = loadMailerConfig({
      DATA_DIR: dataDir, PORT: '0', ADMIN_PORT: '0',
      DATABASE_URL: db.url.replace(`:${SERVICES.mariadb.port}/`, `:${proxy.port}/`),
    });
    mailer = await createMailerService(config, { bus, logger });
    const { port } = await mailer.start();
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await mailer?.stop();
    await bus?.close();
    await proxy?.close();
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('when the database is cut, then unsubscribing answers 503 in the error shape at once, the log tells the outage once, and it works again after', async () => {
    const token = mailer.tokens.issue(mailer.hasher.hash('reader@example.com'));
    const unsubscribe = async () => {
      const started = Date.now();
      const res = await fetch(`${base}/unsubscribe/${token}`, { method: 'POST', headers: { accept: 'application/json' } });
      const text = await res.text();
      return { status: res.status, retryAfter: res.headers.get('retry-after'), text, ms: Date.now() - started };
    };
    expect((await unsubscribe()).status).toBe(200);

    const from = logged.length;
    proxy.cut();
    const answers = [];
    for (let i = 0; i < 8; i += 1) answers.push(await unsubscribe());
    proxy.restore();
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(JSON.parse(answer.text)).toEqual({ error: expect.any(String), code: 'SERVICE_UNAVAILABLE', details: { parameter: null, message: expect.any(String) } });
      expect(answer.retryAfter).toBe('5');
      expect(answer.text).not.toMatch(/ECONNREFUSED|knex|mysql/i);
    }
    // The first answer is as fast as the others: the refused connection answers, nothing waits out a timeout.
    process.stdout.write(`mailer unsubscribe during the cut: ${answers.map((a) => a.ms).join(', ')} ms\n`);
    expect(answers[0]!.ms).toBeLessThan(1_000);

    const back = await unsubscribe();
    expect(back.status).toBe(200);
    const lines = logged.slice(from).filter((line) => line.level !== 'debug');
    expect(lines.filter((line) => line.level === 'error').map((line) => line.msg)).toEqual(['database unreachable']);
    // Counted: the eight requests, each once (the driver's refused connections open the outage but are not failed work).
    const again = lines.filter((line) => line.msg === 'database reachable again');
    expect(again).toEqual([expect.objectContaining({ level: 'info', dependency: 'database' })]);
    expect(Number(again[0]!.failed)).toBeGreaterThanOrEqual(8);
    expect(lines.filter((line) => /request failed/.test(line.msg))).toEqual([]);
    const metrics = await (await fetch(`http://127.0.0.1:${(await mailer.start()).adminPort}/metrics`)).text();
    expect(Number(/mailer_dependency_failures_total\{[^}]*dependency="database"[^}]*\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(8);
  });
});

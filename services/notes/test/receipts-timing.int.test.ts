import { Agent, request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock, silentLogger } from '@vanish/common';
import { createNotesService, loadNotesConfig, type NotesService } from '../src';
import { postJson } from './support/api-client';

/**
 * DECISIONS 12: a purged receipt and one that never existed answer the same 404 in the same time,
 * so timing cannot tell a creator's (or a thief's) old receipt id from a guess. Both take the
 * same path: the id's keyed hash, then one primary-key read that finds nothing.
 */
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const SAMPLES = 2_000;

describe('receipt 404 timing', () => {
  let dataDir: string;
  let service: NotesService;
  let port: number;
  const clock = new ManualClock(new Date());
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'notes-receipt-timing-'));
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`, RECEIPT_SIGNING_KEYS: `r1:${KEY(4)}`,
      NOTE_RETENTION_HOURS: '1', SWEEP_INTERVAL_MS: '2000', // purges soon, and rarely interrupts the samples
    });
    service = await createNotesService(config, { logger: silentLogger, clock });
    ({ port } = await service.start());
  });

  afterAll(async () => {
    agent.destroy();
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const timedGet = (path: string): Promise<{ status: number; body: string; ns: bigint }> => new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ns: process.hrtime.bigint() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });

  const median = (values: bigint[]): number => {
    const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return Number(sorted[Math.floor(sorted.length / 2)]!);
  };

  it('when unknown and purged receipt ids are read 2,000 times each, interleaved, then both answer the same 404 and their medians are within 5 %', async () => {
    // A receipt whose note is ended, then purged by the running service after the retention.
    const created = await postJson(`http://127.0.0.1:${port}`, { content: 'soon gone', max_views: 1 });
    const purgedId = new URL(created.json.receipt_url as string).pathname.slice(3);
    expect(await service.receipts.endNow(purgedId)).toBe('ended');
    clock.advance(3_600_000 + 1);
    const deadline = Date.now() + 60_000;
    while ((await service.knex('receipts').count({ n: '*' }))[0]!.n !== 0) {
      if (Date.now() > deadline) throw new Error('the purger did not delete the ended receipt within 60 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const unknownId = 'Zq'.repeat(21) + 'Z';
    // Warm-up, then alternate so that drift on a shared machine hits both series alike.
    for (let i = 0; i < 200; i += 1) await timedGet(`/api/receipt/${i % 2 ? purgedId : unknownId}.php`);
    const round = async () => {
      const purged: bigint[] = [];
      const unknown: bigint[] = [];
      for (let i = 0; i < SAMPLES; i += 1) {
        const order = i % 2 === 0 ? [purgedId, unknownId] : [unknownId, purgedId];
        for (const id of order) {
          const answer = await timedGet(`/api/receipt/${id}.php`);
          expect(answer.status).toBe(404);
          expect(answer.body).toBe(firstUnknown.body);
          (id === purgedId ? purged : unknown).push(answer.ns);
        }
      }
      const [a, b] = [median(purged), median(unknown)];
      const spread = Math.abs(a - b) / Math.max(a, b);
      // Reported for the record (docs/receipts.md quotes a run).
      process.stdout.write(`receipt 404 medians: purged ${(a / 1e6).toFixed(3)} ms, unknown ${(b / 1e6).toFixed(3)} ms, spread ${(spread * 100).toFixed(2)} %\n`);
      return spread;
    };
    const firstUnknown = await timedGet(`/api/receipt/${unknownId}.php`);
    expect(firstUnknown.status).toBe(404);
    expect(JSON.parse(firstUnknown.body)).toEqual({ error: 'Receipt not found', code: 'NOT_FOUND', details: { parameter: null, message: 'Receipt not found' } });
    // A real oracle shows in every round; a burst of load from other processes on a shared machine
    // does not, so up to three rounds of 2,000 samples each are taken and one must be within 5 %.
    const spreads: number[] = [];
    for (let attempt = 0; attempt < 3 && !spreads.some((spread) => spread <= 0.05); attempt += 1) spreads.push(await round());
    expect(Math.min(...spreads)).toBeLessThanOrEqual(0.05);
  }, 600_000);
});

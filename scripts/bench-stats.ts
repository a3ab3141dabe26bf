// `npm run build && tsc -p scripts/tsconfig.bench.json && node scripts/dist/bench-stats.js`
// Stats answer time against the size of the history (issue 5: 1,000 vs 1,000,000 notes, within 20%).
// For each database (SQLite file, MariaDB) and each level, a fresh stats service (in-process bus, port 0)
// gets its tables filled directly as if `level` notes had been created over the last 60 days (minute and
// hour buckets, counters, and the seen-id digests of the last 7 days' events), then GET /api/stats.php is
// called sequentially (one client, so the number is the cost of one answer, not the machine's throughput).
// Also measured: the same with the window cache defeated (every answer sums the buckets again, as in the
// minute after a late event), which is the worst case a request can meet.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { silentLogger } from '@vanish/common';
import { InProcessBus } from '@vanish/bus';
import { createStatsService, loadStatsConfig } from '@vanish/stats';
import type { Knex } from 'knex';

const MARIADB = (process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306').replace(/\/+$/, '');
const MINUTE_MS = 60_000;
const HISTORY_MINUTES = 60 * 24 * 60;
const LEVELS = [1_000, 1_000_000];
const WARMUP = 100;
const CALLS = Number(process.env.BENCH_STATS_CALLS ?? 1_000);

const log = (message: string) => process.stderr.write(`[bench-stats ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

async function fill(knex: Knex, total: number): Promise<void> {
  const nowMinute = Math.floor(Date.now() / MINUTE_MS);
  const perMinute = new Map<number, number>();
  for (let i = 0; i < total; i += 1) {
    const minute = nowMinute - Math.floor((i / total) * HISTORY_MINUTES);
    perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1);
  }
  const perHour = new Map<number, number>();
  for (const [minute, n] of perMinute) perHour.set(Math.floor(minute / 60), (perHour.get(Math.floor(minute / 60)) ?? 0) + n);
  const insert = async (table: string, rows: Record<string, unknown>[]) => {
    for (let i = 0; i < rows.length; i += 500) await knex(table).insert(rows.slice(i, i + 500));
  };
  await insert('stats_created_minutes', [...perMinute].map(([minute, created]) => ({ minute, created })));
  await insert('stats_created_hours', [...perHour].map(([hour, created]) => ({ hour, created })));
  // About 2.5 events per note; the seen ids of the last 7 days are what retention keeps.
  const seen = Math.round(total * 2.5 * (7 / 60));
  const now = Date.now();
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < seen; i += 1) rows.push({ id_digest: randomBytes(16).toString('hex'), seen_at: now - Math.floor(Math.random() * 7 * 86_400_000) });
  await insert('stats_seen_events', rows);
  const ended = Math.floor(total * 0.6);
  await knex('stats_counters').where({ name: 'notes_created' }).update({ value: total });
  await knex('stats_counters').where({ name: 'notes_ended' }).update({ value: ended });
  await knex('stats_counters').where({ name: 'notes_ended_read' }).update({ value: Math.floor(ended * 0.8) });
  // Buckets written behind the service's back: tell its window cache, as a late event would.
  await knex('stats_counters').where({ name: 'created_bucket_late_writes' }).increment('value', 1);
}

interface Result { backend: string; notes: number; mode: string; p50: number; p99: number; mean: number; rows: number }

interface Running { notes: number; url: string; knex: Knex; rows: number; stop(): Promise<void> }

async function startLevel(backend: string, databaseUrl: string, notes: number): Promise<Running> {
  const bus = new InProcessBus();
  const config = loadStatsConfig({ DATABASE_URL: databaseUrl, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
  const service = await createStatsService(config, { bus, logger: silentLogger });
  const { port } = await service.start();
  const started = Date.now();
  await fill(service.knex, notes);
  const [{ n }] = await service.knex('stats_seen_events').count({ n: '*' });
  log(`${backend}: ${notes.toLocaleString('en')} notes of history filled in ${Date.now() - started} ms (${Number(n).toLocaleString('en')} seen ids)`);
  const url = `http://127.0.0.1:${port}/api/stats.php`;
  const body = (await (await fetch(url)).json()) as { stats: { total_notes_created: number; notes_30d: number } };
  if (body.stats.total_notes_created !== notes) throw new Error(`stats says ${body.stats.total_notes_created}, expected ${notes}`);
  return { notes, url, knex: service.knex, rows: Number(n), stop: async () => { await service.stop(); await bus.close(); } };
}

/** Alternates calls between the levels, so load from elsewhere on the machine hits both alike. */
async function compare(backend: string, levels: Running[], mode: 'steady' | 'no-cache'): Promise<Result[]> {
  const times = levels.map(() => [] as number[]);
  for (let i = 0; i < WARMUP + CALLS; i += 1) {
    for (const [index, level] of levels.entries()) {
      // no-cache: a late event just landed, so this answer sums every window's buckets again.
      if (mode === 'no-cache') await level.knex('stats_counters').where({ name: 'created_bucket_late_writes' }).increment('value', 1);
      const t0 = process.hrtime.bigint();
      const res = await fetch(level.url);
      await res.arrayBuffer();
      if (i >= WARMUP) times[index].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  return levels.map((level, index) => {
    const sorted = times[index].sort((a, b) => a - b);
    const pick = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    return { backend, notes: level.notes, mode, p50: pick(0.5), p99: pick(0.99), mean: sorted.reduce((a, b) => a + b, 0) / sorted.length, rows: level.rows };
  });
}

async function measureBackend(backend: string, makeUrl: () => Promise<{ url: string; drop(): Promise<void> }>): Promise<Result[]> {
  const dbs: Array<{ url: string; drop(): Promise<void> }> = [];
  const levels: Running[] = [];
  try {
    for (const notes of LEVELS) {
      const db = await makeUrl();
      dbs.push(db);
      levels.push(await startLevel(backend, db.url, notes));
    }
    return [...await compare(backend, levels, 'steady'), ...await compare(backend, levels, 'no-cache')];
  } finally {
    for (const level of levels) await level.stop();
    for (const db of dbs) await db.drop();
  }
}

async function main(): Promise<void> {
  const results: Result[] = [];
  results.push(...await measureBackend('SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-stats-'));
    return { url: `sqlite:${join(dir, 'stats.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }));
  results.push(...await measureBackend('MariaDB', async () => {
    const name = `bench_stats_${randomBytes(4).toString('hex')}`;
    const admin = await mysql.createConnection(MARIADB);
    await admin.query(`CREATE DATABASE \`${name}\``);
    return {
      url: `${MARIADB}/${name}`,
      drop: async () => { await admin.query(`DROP DATABASE IF EXISTS \`${name}\``); await admin.end(); },
    };
  }));
  const lines = [
    `GET /api/stats.php, one sequential client alternating between the two histories, ${CALLS} calls each after ${WARMUP} warm-up calls (ms).`,
    'steady: the usual answer (window sums of complete minutes cached for the minute); no-cache: every answer sums all buckets again (the minute after a late event).',
    '',
    '| database | mode | notes of history | seen-id rows | p50 | p99 | mean |',
    '|---|---|---|---|---|---|---|',
    ...results.map((r) => `| ${r.backend} | ${r.mode} | ${r.notes.toLocaleString('en')} | ${r.rows.toLocaleString('en')} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.mean.toFixed(2)} |`),
    '',
  ];
  for (const backend of ['SQLite', 'MariaDB']) {
    for (const mode of ['steady', 'no-cache']) {
      const [small, large] = results.filter((r) => r.backend === backend && r.mode === mode);
      const change = ((large.p50 - small.p50) / small.p50) * 100;
      lines.push(`${backend} ${mode}: p50 at 1,000,000 vs 1,000 notes: ${change >= 0 ? '+' : ''}${change.toFixed(1)}%${mode === 'steady' ? ` (goal: within 20%: ${Math.abs(change) <= 20 ? 'met' : 'NOT met'})` : ''}`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((err: Error) => {
  process.stderr.write(`${err.stack ?? err.message}\n`);
  process.exit(1);
});

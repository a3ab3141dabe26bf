'use strict';
// CPU of the stats service per counted note event, in-process on the machine's MariaDB (not a test;
// nothing asserts on speed): KnexStatsStore.applyBatch as the note-events consumer calls it, batches of
// `batch` note.created events (the consumer's group commit gathers what arrives in 50 ms: about 30 at
// 600 creates/s), one batch at a time. No AMQP, no parsing: the counting transaction alone.
//   node services/stats/bench/stats-count.bench.js [rounds] [batches per round] [batch]
// CPU is this process's user + system time (process.cpuUsage), so it hardly depends on what else the
// machine runs; the lowest round is printed with the others (other work on a shared machine only adds).
// A database of its own on 127.0.0.1:3306 (root, no password), dropped at the end.
// BENCH_STATS_ROOT=<another worktree> measures that worktree's sources (the A of an A/B).
const { join } = require('node:path');
const ROOT = process.env.BENCH_STATS_ROOT ?? join(__dirname, '..', '..', '..');
require(join(ROOT, 'services/notes/test/support/ts-hook'));
const { randomBytes } = require('node:crypto');
const mysql = require('mysql2/promise');
const { configureKnex } = require(join(ROOT, 'services/stats/src/adapters/db/configure-knex'));
const { migrateToLatest } = require(join(ROOT, 'services/stats/src/adapters/db/migrate'));
const { KnexStatsStore } = require(join(ROOT, 'services/stats/src/adapters/db/knex-stats-store'));

async function main() {
  const rounds = Number(process.argv[2] || 3);
  const batches = Number(process.argv[3] || 300);
  const batchSize = Number(process.argv[4] || 30);
  const name = `vanish_bench_stats_${randomBytes(4).toString('hex')}`;
  const root = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '' });
  await root.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const knex = configureKnex(`mysql://root@127.0.0.1:3306/${name}`);
  try {
    await migrateToLatest(knex);
    const store = new KnexStatsStore(knex);
    const batch = () => {
      const now = Date.now();
      const minute = Math.floor(now / 60_000);
      return Array.from({ length: batchSize }, () => ({
        eventIdDigest: randomBytes(16).toString('hex'),
        delta: { created: 1, ended: 0, endedRead: 0, accessed: 0, failedAccess: 0, lateBucketWrites: 0, createdMinute: minute },
      }));
    };
    for (let i = 0; i < 30; i += 1) await store.applyBatch(batch(), Date.now());
    const results = [];
    for (let round = 0; round < rounds; round += 1) {
      const prepared = Array.from({ length: batches }, batch);
      const before = process.cpuUsage();
      for (const items of prepared) await store.applyBatch(items, Date.now());
      const cpu = process.cpuUsage(before);
      results.push((cpu.user + cpu.system) / (batches * batchSize));
    }
    const sorted = [...results].sort((a, b) => a - b);
    console.log(`counting ${batchSize} events a batch: ${sorted[0].toFixed(1)} µs CPU per event (rounds ${results.map((r) => r.toFixed(1)).join(', ')})`);
  } finally {
    await knex.destroy();
    await root.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await root.end();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });

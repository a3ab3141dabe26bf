'use strict';
// What a flood of passcode checks does to reveals of notes without a passcode, with the scrypt cap
// and without it (not a test; nothing asserts on speed; the numbers move with the host's load).
//   node services/notes/bench/scrypt-cap.bench.js [reveals] [flooders]
// Production scrypt (N 2^15), a temporary SQLite file. Each round: `flooders` loops check a wrong
// passcode against one note without pause (the scrypt work of a guess, no database), while one
// client reveals notes without a passcode one after the other, each followed by a dns.lookup of
// localhost (libuv's thread pool, as a new database connection to a host name needs); reported:
// their latencies.
require('../test/support/ts-hook');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { lookup } = require('node:dns/promises');
const { KeyRing, MessageSealer, MAIL_SEAL_PURPOSE, systemClock, silentLogger } = require('@vanish/common');
const { configureKnex } = require('../src/adapters/db/configure-knex');
const { migrateToLatest } = require('../src/adapters/db/migrate');
const { KnexNoteStore } = require('../src/adapters/db/knex-note-store');
const { NoteCrypto } = require('../src/domain/note-crypto');
const { NoteService } = require('../src/domain/note-service');
const { ScryptLimit, DEFAULT_SCRYPT_LIMIT } = require('../src/domain/scrypt-limit');

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function round(label, limit, reveals, flooders) {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-scrypt-bench-'));
  const knex = configureKnex(`sqlite:${join(dir, 'notes.db')}`);
  try {
    await migrateToLatest(knex);
    const crypto = new NoteCrypto({ masterKeys: KeyRing.generate(), lookupKey: randomBytes(32), scryptLimit: limit });
    const service = new NoteService({
      store: new KnexNoteStore(knex), crypto, mailSealer: new MessageSealer(KeyRing.generate(), MAIL_SEAL_PURPOSE),
      clock: systemClock, publicBaseUrl: 'http://localhost:8080', retentionHours: 720, logger: silentLogger,
    });
    const input = { content: 'x'.repeat(500), expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null };
    const plain = [];
    for (let i = 0; i < reveals; i += 1) plain.push((await service.create(input)).uuid);
    const guardedUuid = crypto.newUuid();
    const guarded = await crypto.seal(guardedUuid, { content: 'x', passcode: 'right', notificationEmail: null });

    let flooding = flooders > 0;
    let checks = 0;
    let refused = 0;
    const flood = Array.from({ length: flooders }, async () => {
      while (flooding) {
        try {
          await crypto.open(guardedUuid, 'wrong', guarded);
          checks += 1;
        } catch {
          refused += 1;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 300)); // let the flood fill the pool
    const latencies = [];
    const lookups = [];
    const started = Date.now();
    const checksBefore = checks;
    for (const uuid of plain) {
      const t0 = process.hrtime.bigint();
      const result = await service.reveal(uuid, null);
      if (result.outcome !== 'revealed') throw new Error(`unexpected ${result.outcome}`);
      const t1 = process.hrtime.bigint();
      await lookup('localhost');
      latencies.push(Number(t1 - t0) / 1e6);
      lookups.push(Number(process.hrtime.bigint() - t1) / 1e6);
    }
    const seconds = (Date.now() - started) / 1000;
    const checksDuring = checks - checksBefore;
    flooding = false;
    await Promise.all(flood);
    latencies.sort((a, b) => a - b);
    lookups.sort((a, b) => a - b);
    console.log(`${label}: plain reveals median ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms; `
      + `dns.lookup median ${percentile(lookups, 50).toFixed(1)} ms, p95 ${percentile(lookups, 95).toFixed(1)} ms; `
      + `${checksDuring} passcode checks done in those ${seconds.toFixed(1)} s, ${refused} refused`);
  } finally {
    await knex.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main() {
  const reveals = Number(process.argv[2] || 30);
  const flooders = Number(process.argv[3] || 32);
  console.log(`${reveals} plain reveals each round, ${flooders} passcode-check loops, UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`);
  await round('no flood', new ScryptLimit(), reveals, 0);
  await round(`cap ${DEFAULT_SCRYPT_LIMIT.maxConcurrent} (default)`, new ScryptLimit(), reveals, flooders);
  await round('no cap (64)', new ScryptLimit({ maxConcurrent: 64, maxQueued: 1000 }), reveals, flooders);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});

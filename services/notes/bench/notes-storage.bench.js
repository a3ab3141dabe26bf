'use strict';
// Rough numbers for the notes domain on a real database (not a test; nothing asserts on speed).
//   node services/notes/bench/notes-storage.bench.js [DATABASE_URL] [count]
// Default: a temporary SQLite file, 300 notes. For MariaDB pass a mysql:// URL of an empty database.
require('../test/support/ts-hook');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { KeyRing, MessageSealer, MAIL_SEAL_PURPOSE, systemClock, silentLogger } = require('@vanish/common');
const { configureKnex } = require('../src/adapters/db/configure-knex');
const { migrateToLatest, rollbackAll } = require('../src/adapters/db/migrate');
const { KnexNoteStore } = require('../src/adapters/db/knex-note-store');
const { NoteCrypto, PRODUCTION_SCRYPT_PARAMS } = require('../src/domain/note-crypto');
const { NoteService } = require('../src/domain/note-service');

async function timed(label, count, concurrency, fn) {
  const started = process.hrtime.bigint();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await fn(next++);
  }));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  console.log(`${label}: ${count} in ${ms.toFixed(0)} ms = ${(count / (ms / 1000)).toFixed(0)}/s (concurrency ${concurrency})`);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'vanish-bench-'));
  const url = process.argv[2] || `sqlite:${join(dir, 'notes.db')}`;
  const count = Number(process.argv[3] || 300);
  const knex = configureKnex(url);
  await migrateToLatest(knex);
  const crypto = new NoteCrypto({ masterKeys: KeyRing.generate(), lookupKey: randomBytes(32) });
  const service = new NoteService({
    store: new KnexNoteStore(knex), crypto, mailSealer: new MessageSealer(KeyRing.generate(), MAIL_SEAL_PURPOSE),
    clock: systemClock, publicBaseUrl: 'http://localhost:8080', retentionHours: 720, logger: silentLogger,
  });
  const input = { content: 'x'.repeat(500), expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null };
  console.log(`database ${url.split(':')[0]}, scrypt ${JSON.stringify(PRODUCTION_SCRYPT_PARAMS)}`);
  const uuids = [];
  await timed('create (no passcode)', count, 8, async () => { uuids.push((await service.create(input)).uuid); });
  await timed('metadata', count, 8, async (i) => { await service.metadata(uuids[i]); });
  await timed('reveal (no passcode, destroys)', count, 8, async (i) => { await service.reveal(uuids[i], null); });
  const few = Math.max(10, Math.floor(count / 10));
  const protectedIds = [];
  await timed('create (passcode, production scrypt)', few, 4, async () => { protectedIds.push((await service.create({ ...input, passcode: 'pw' })).uuid); });
  await timed('reveal (passcode, production scrypt)', few, 4, async (i) => { await service.reveal(protectedIds[i], 'pw'); });
  await rollbackAll(knex);
  await knex.destroy();
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => { console.error(err); process.exit(1); });

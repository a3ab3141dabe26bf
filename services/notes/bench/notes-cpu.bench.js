'use strict';
// CPU of the notes process per creation and per metadata read, in-process on the machine's MariaDB
// (not a test; nothing asserts on speed). What it covers: NoteService and KnexNoteStore as the
// service runs them (validation aside): uuid, sealing, receipt id, the group-committed insert of
// note, receipt and outbox row, and the shared primary-key reads; not HTTP, not the outbox relay.
//   node services/notes/bench/notes-cpu.bench.js [rounds] [operations per round]
// 50 callers at a time, as the bench's 50 connections. CPU is this process's user + system time
// over the operations (process.cpuUsage), so it hardly depends on what else the machine runs; of
// the rounds the lowest is printed with the spread (other work on a shared machine only adds).
// A database of its own on 127.0.0.1:3306 (root, no password), dropped at the end.
require('../test/support/ts-hook');
const { randomBytes } = require('node:crypto');
const mysql = require('mysql2/promise');
const { KeyRing, MessageSealer, MAIL_SEAL_PURPOSE, systemClock, silentLogger } = require('@vanish/common');
const { configureKnex } = require('../src/adapters/db/configure-knex');
const { migrateToLatest } = require('../src/adapters/db/migrate');
const { KnexNoteStore } = require('../src/adapters/db/knex-note-store');
const { NoteCrypto } = require('../src/domain/note-crypto');
const { NoteService } = require('../src/domain/note-service');
const { ReceiptIds } = require('../src/receipts/receipt-ids');

const CALLERS = 50;

async function cpuPerOperation(count, operation) {
  let next = 0;
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    while (next < count) await operation(next++);
  }));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  return { us: (cpu.user + cpu.system) / count, perSecond: count / seconds };
}

function summary(label, results) {
  const us = results.map((r) => r.us).sort((a, b) => a - b);
  const rate = Math.max(...results.map((r) => r.perSecond));
  return `${label}: ${us[0].toFixed(0)} µs CPU per operation (rounds ${us.map((u) => u.toFixed(0)).join(', ')}), best ${rate.toFixed(0)}/s`;
}

async function main() {
  const rounds = Number(process.argv[2] || 3);
  const count = Number(process.argv[3] || 3000);
  const name = `vanish_bench_cpu_${randomBytes(4).toString('hex')}`;
  const root = await mysql.createConnection({ host: '127.0.0.1', port: 3306, user: 'root', password: '' });
  await root.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  const knex = configureKnex(`mysql://root@127.0.0.1:3306/${name}`);
  try {
    await migrateToLatest(knex);
    const lookupKey = randomBytes(32);
    const service = new NoteService({
      store: new KnexNoteStore(knex), crypto: new NoteCrypto({ masterKeys: KeyRing.generate(), lookupKey }),
      mailSealer: new MessageSealer(KeyRing.generate(), MAIL_SEAL_PURPOSE), receiptIds: new ReceiptIds(lookupKey),
      clock: systemClock, publicBaseUrl: 'http://localhost:8080', retentionHours: 720, logger: silentLogger,
    });
    // As the bench's creations: view-once, no passcode, a short text.
    const input = { content: 'the vault code is 4711', expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null };
    const uuids = [];
    await cpuPerOperation(300, async () => { uuids.push((await service.create(input)).uuid); });
    const creates = [];
    const reads = [];
    for (let round = 0; round < rounds; round += 1) {
      creates.push(await cpuPerOperation(count, async () => { uuids.push((await service.create(input)).uuid); }));
      reads.push(await cpuPerOperation(count, async (i) => { await service.metadata(uuids[i % 200]); }));
    }
    console.log(summary('create', creates));
    console.log(summary('metadata read', reads));
  } finally {
    await knex.destroy();
    await root.query(`DROP DATABASE IF EXISTS \`${name}\``);
    await root.end();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });

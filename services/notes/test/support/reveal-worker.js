'use strict';
// A second notes process for the cross-process reveal test: builds the real NoteService on the
// real knex store from the sources, then reveals on command and reports the outcomes.
require('./ts-hook');
const { KeyRing, silentLogger, ConsumerSealer, MAIL_SEAL_PURPOSE, systemClock } = require('@vanish/common');
const { configureKnex } = require('../../src/adapters/db/configure-knex');
const { KnexNoteStore } = require('../../src/adapters/db/knex-note-store');
const { NoteCrypto } = require('../../src/domain/note-crypto');
const { NoteService } = require('../../src/domain/note-service');

const env = process.env;
const knex = configureKnex(env.DATABASE_URL);
const service = new NoteService({
  // This test checks that the view claim is atomic across processes, not the store's 3 s bound: 25 reveals
  // queue on one row lock per process, and on a loaded machine their turn can come later than 3 s.
  store: new KnexNoteStore(knex, systemClock, { operationTimeoutMs: 30_000 }),
  crypto: new NoteCrypto({
    masterKeys: KeyRing.parse(env.MASTER_KEYS),
    lookupKey: Buffer.from(env.LOOKUP_KEY, 'base64'),
    kdf: { N: 1024, r: 8, p: 1 },
  }),
  mailSealer: new ConsumerSealer(KeyRing.parse(env.MAIL_PUBLIC_KEYS), MAIL_SEAL_PURPOSE),
  clock: systemClock,
  publicBaseUrl: 'http://localhost:8080',
  retentionHours: 720,
  logger: silentLogger,
});

process.on('message', async (message) => {
  if (message.type !== 'reveal') return;
  const settled = await Promise.allSettled(Array.from({ length: message.count }, () => service.reveal(message.uuid, null)));
  const outcomes = settled.map((s) => (s.status === 'fulfilled' ? s.value.outcome : `error: ${s.reason && s.reason.message}`));
  await knex.destroy();
  process.send({ type: 'done', outcomes }, () => process.exit(0));
});

knex.raw('select 1').then(
  () => process.send({ type: 'ready', pid: process.pid }),
  (err) => {
    process.send({ type: 'failed', error: err.message }, () => process.exit(1));
  },
);

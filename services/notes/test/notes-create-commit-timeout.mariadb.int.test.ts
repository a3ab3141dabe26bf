import type { Knex } from 'knex';
import { ConsumerSealer, MAIL_SEAL_PURPOSE, ManualClock, ServiceUnavailableError, publicRingOf, silentLogger } from '@vanish/common';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { SERVICES, requireService } from '@vanish/testkit/services';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { KnexNoteStore } from '../src/adapters/db/knex-note-store';
import { migrateToLatest } from '../src/adapters/db/migrate';
import { NoteCrypto } from '../src/domain/note-crypto';
import { NoteService } from '../src/domain/note-service';
import { TEST_KDF, newKeys, noteInput } from './support/notes-harness';

const OPERATION_TIMEOUT_MS = 1000;
const STALL_MS = 3000;

/**
 * Issue 19, item 11: a creation whose transaction outlives the store's deadline. The service
 * reaches MariaDB through the fault proxy; the test stalls the wire at a chosen statement of the
 * creation's transaction and reads the outcome straight from MariaDB (not through the proxy).
 */
describe('notes creation whose commit outlives the deadline (MariaDB, fault proxy)', () => {
  let database: TestDatabase;
  let proxy: FaultProxy;
  let knex: Knex;
  let direct: Knex;
  let restoreTimer: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    await requireService('mariadb');
    database = await createTestDatabase('vanish_notes_commit');
    direct = configureKnex(database.url, { logger: silentLogger });
    await migrateToLatest(direct);
    proxy = await startFaultProxy({ targetHost: SERVICES.mariadb.host, targetPort: SERVICES.mariadb.port });
    knex = configureKnex(`mysql://root@127.0.0.1:${proxy.port}/${database.name}`, { logger: silentLogger });
  });

  afterEach(async () => {
    clearTimeout(restoreTimer);
    proxy.restore();
    knex.removeAllListeners('query');
    await direct('notes').delete();
    await direct('outbox').delete();
  });

  afterAll(async () => {
    await knex?.destroy();
    await proxy?.close();
    await direct?.destroy();
    await database?.drop();
  });

  function notesService(through: Knex = knex, commitOutcomeTimeoutMs?: number) {
    const keys = newKeys();
    const clock = new ManualClock(new Date());
    const store = new KnexNoteStore(through, clock, { operationTimeoutMs: OPERATION_TIMEOUT_MS, commitOutcomeTimeoutMs });
    const service = new NoteService({
      store,
      crypto: new NoteCrypto({ masterKeys: keys.masterKeys, lookupKey: keys.lookupKey, kdf: TEST_KDF }),
      mailSealer: new ConsumerSealer(publicRingOf(keys.mailPrivateKeys), MAIL_SEAL_PURPOSE),
      clock,
      publicBaseUrl: 'http://localhost:8080',
      retentionHours: 720,
      logger: silentLogger,
    });
    return { service, store, clock, crypto: new NoteCrypto({ masterKeys: keys.masterKeys, lookupKey: keys.lookupKey, kdf: TEST_KDF }) };
  }

  /** Stalls the wire (both ways, every connection) as the first statement matching `pattern` is sent, for STALL_MS. */
  function stallAt(pattern: RegExp, options: { on?: Knex; onlyOpenConnections?: boolean } = {}): { stalled: Promise<void> } {
    let done = false;
    let stalled!: () => void;
    const promise = new Promise<void>((resolve) => { stalled = resolve; });
    (options.on ?? knex).on('query', (query: { sql: string }) => {
      if (done || !pattern.test(query.sql)) return;
      done = true;
      if (options.onlyOpenConnections) proxy.stallOpenConnections();
      else proxy.stall();
      restoreTimer = setTimeout(() => proxy.restore(), STALL_MS);
      stalled();
    });
    return { stalled: promise };
  }

  const storedRows = async () => ({
    notes: (await direct('notes').select('lookup')).map((row: { lookup: string }) => row.lookup),
    outbox: (await direct('outbox').select('routing_key')).map((row: { routing_key: string }) => row.routing_key),
  });

  /** Until the stalled statements have reached MariaDB and whatever they do is done. */
  const settled = async (service: NoteService) => {
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    for (let i = 0; i < 100; i += 1) {
      const attempt = await service.create(noteInput({ content: 'probe' })).then(() => true, () => false);
      if (attempt) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the store never worked again after the stall');
  };

  it('when the COMMIT is held on the wire past the deadline and then goes through, then the creation answers with its note, and a creation waiting behind it answers 503 and is never stored', async () => {
    const { service, crypto } = notesService();
    const { stalled } = stallAt(/^commit/i);
    const first = service.create(noteInput({ content: 'committed late', sendLinkEmail: 'reader@example.com' })).then((note) => note, (err: unknown) => err);
    await stalled;
    const second = await service.create(noteInput({ content: 'queued behind it', sendLinkEmail: 'other@example.com' })).then((note) => note, (err: unknown) => err);
    expect(second).toBeInstanceOf(ServiceUnavailableError);

    const answer = await first;
    // The answer says what MariaDB kept: the note and its one link e-mail command.
    expect(answer).not.toBeInstanceOf(Error);
    const created = answer as Awaited<ReturnType<NoteService['create']>>;
    await settled(service);
    const rows = await storedRows();
    expect(rows.notes).toContain(crypto.lookup(created.uuid));
    expect(rows.notes).toHaveLength(2); // it and the probe: the creation that answered 503 is not there
    expect(rows.outbox.filter((key) => key === 'mail.send')).toHaveLength(1);
  }, 60_000);

  it('when the deadline passes before the COMMIT is sent, then the creation answers 503 and nothing of it is ever committed', async () => {
    const { service } = notesService();
    const { stalled } = stallAt(/^insert into `outbox`/i);
    const answer = service.create(noteInput({ content: 'never stored', sendLinkEmail: 'reader@example.com' })).then((note) => note, (err: unknown) => err);
    await stalled;
    expect(await answer).toBeInstanceOf(ServiceUnavailableError);
    await settled(service);
    const rows = await storedRows();
    expect(rows.notes).toHaveLength(1); // the probe only
    expect(rows.outbox).toEqual(['note.created']);
  }, 60_000);

  it('when the COMMIT stays held on its connection past the outcome wait, then that connection is ended on the server and the answer is what MariaDB kept: 503, and nothing is stored even when the held COMMIT arrives', async () => {
    // A pool of its own with no idle connection: the creation's transaction is the only
    // connection the stall holds, and the store's questions afterwards go through new ones.
    const own = configureKnex(`mysql://root@127.0.0.1:${proxy.port}/${database.name}`, { logger: silentLogger });
    try {
      const { service } = notesService(own, 1000);
      const { stalled } = stallAt(/^commit/i, { on: own, onlyOpenConnections: true });
      const answer = service.create(noteInput({ content: 'held commit', sendLinkEmail: 'reader@example.com' })).then((note) => note, (err: unknown) => err);
      await stalled;
      expect(await answer).toBeInstanceOf(ServiceUnavailableError);
      await settled(service);
      const rows = await storedRows();
      expect(rows.notes).toHaveLength(1); // the probe only
      expect(rows.outbox).toEqual(['note.created']);
    } finally {
      await own.destroy();
    }
  }, 60_000);

  it('when a creation\'s connection hangs before its COMMIT, then the creations after it are not held up: they commit through another connection', async () => {
    const own = configureKnex(`mysql://root@127.0.0.1:${proxy.port}/${database.name}`, { logger: silentLogger });
    try {
      const { service, crypto } = notesService(own);
      // Held for the rest of the test (restored in afterEach): a connection that died silently.
      const { stalled } = stallAt(/^insert into `notes`/i, { on: own, onlyOpenConnections: true });
      clearTimeout(restoreTimer);
      const stuck = service.create(noteInput({ content: 'on a dead connection' })).then((note) => note, (err: unknown) => err);
      await stalled;
      clearTimeout(restoreTimer);
      expect(await stuck).toBeInstanceOf(ServiceUnavailableError);
      const next = await service.create(noteInput({ content: 'after it', sendLinkEmail: 'reader@example.com' })).then((note) => note, (err: unknown) => err);
      expect(next).not.toBeInstanceOf(Error);
      const rows = await storedRows();
      expect(rows.notes).toEqual([crypto.lookup((next as Awaited<ReturnType<NoteService['create']>>).uuid)]);
      expect(rows.outbox.sort()).toEqual(['mail.send', 'note.created']);
    } finally {
      proxy.restore();
      await own.destroy();
    }
  }, 60_000);

  /**
   * Three creations: the first commits alone, the two that arrive meanwhile share the next COMMIT, at
   * which `atCut` runs (it cuts the wire). Returns each creation's outcome, its lookup and what was stored.
   */
  async function creationsThroughACutCommit(digits: string, atCut: () => void) {
    const { service, store, crypto, clock } = notesService();
    const template = await service.create(noteInput({ content: 'template' }));
    const record = (await store.findActive(crypto.lookup(template.uuid), clock.now()))!;
    const lookups = [...digits].map((digit) => digit.repeat(record.lookup.length));
    let commits = 0;
    knex.on('query', (query: { sql: string }) => {
      if (/^commit/i.test(query.sql) && ++commits === 2) atCut();
    });
    const outcomes = await Promise.allSettled(lookups.map((lookup) => store.insertNew({ ...record, lookup, noteRef: lookup[0]!.repeat(record.noteRef.length) }, [])));
    proxy.restore();
    expect(commits).toBe(2);
    return { outcomes, lookups, stored: new Set(await direct('notes').pluck('lookup')) };
  }

  it('when a shared transaction\'s COMMIT is cut off and the database is back within the outcome wait (a failover), then its creations get what MariaDB kept: each stored one answered with its row, any other 503, never 500', async () => {
    const { outcomes, lookups, stored } = await creationsThroughACutCommit('def', () => {
      proxy.cut();
      setTimeout(() => proxy.restore(), 1_000); // the writer address answers again, as after a failover
    });
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') expect(stored.has(lookups[i]!)).toBe(true);
      else expect({ status: (outcome.reason as { statusCode?: number }).statusCode, stored: stored.has(lookups[i]!) }).toEqual({ status: 503, stored: false });
    });
  }, 60_000);

  it('when a shared transaction\'s COMMIT is cut off and the database stays out of reach, then its creations answer 500 (outcome unknown) and none is answered as stored without its row', async () => {
    const { outcomes, lookups, stored } = await creationsThroughACutCommit('abc', () => proxy.cut());
    expect(outcomes[0]!.status).toBe('fulfilled');
    // While MariaDB cannot be asked, the shared COMMIT's outcome is unknown: 500, not 503 and never 200.
    for (const outcome of outcomes.slice(1)) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ statusCode: 500 });
    }
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') expect(stored.has(lookups[i]!)).toBe(true);
    });
  }, 60_000);
});

import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { ServiceUnavailableError, publicRingOf, silentLogger } from '@vanish/common';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { waitFor } from '@vanish/testkit/net';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { KnexNoteStore } from '../src/adapters/db/knex-note-store';
import { KnexOutboxStore } from '../src/adapters/db/knex-outbox-store';
import { MIGRATION_NAMES, migrateToLatest } from '../src/adapters/db/migrate';
import { buildNotes, newKeys, noteInput, outboxEvents } from './support/notes-harness';

type WorkerMessage = { type: 'ready' } | { type: 'failed'; error: string } | { type: 'done'; outcomes: string[] };

function startWorker(env: Record<string, string>): { child: ChildProcess; next: () => Promise<WorkerMessage> } {
  const child = fork(join(__dirname, 'support', 'reveal-worker.js'), [], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: WorkerMessage[] = [];
  let waiting: ((message: WorkerMessage) => void) | undefined;
  child.on('message', (message: WorkerMessage) => {
    if (waiting) {
      const resolve = waiting;
      waiting = undefined;
      resolve(message);
    } else inbox.push(message);
  });
  const next = () => new Promise<WorkerMessage>((resolve, reject) => {
    const queued = inbox.shift();
    if (queued) return resolve(queued);
    waiting = resolve;
    child.once('exit', (code) => reject(new Error(`reveal worker exited with ${code} before answering`)));
  });
  return { child, next };
}

describe('notes on MariaDB across processes', () => {
  let database: TestDatabase;
  let knex: Knex;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('vanish_notes');
    knex = configureKnex(database.url);
    // Two processes starting together both run the migrations; the lock makes that safe.
    const other = configureKnex(database.url);
    try {
      const applied = await Promise.all([migrateToLatest(knex), migrateToLatest(other)]);
      expect(applied.flat().sort()).toEqual([...MIGRATION_NAMES].sort());
    } finally {
      await other.destroy();
    }
    // Two migration runs racing for the lock take more than jest's 5 s on a loaded machine; past the bound,
    // afterAll would drop the database under the migrations still running.
  }, 60_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await knex?.destroy();
    await database?.drop();
  });

  it('when 50 reveals of a max_views 3 note are split across two processes, then exactly 3 succeed and one destroy event is written', async () => {
    const keys = newKeys();
    const { service } = buildNotes(knex, keys);
    const { uuid } = await service.create(noteInput({ maxViews: 3, content: 'three times only' }));
    const env = {
      DATABASE_URL: database.url,
      MASTER_KEYS: keys.masterKeys.serialize(),
      LOOKUP_KEY: keys.lookupKey.toString('base64'),
      MAIL_PUBLIC_KEYS: publicRingOf(keys.mailPrivateKeys).serialize(),
    };
    const workers = [startWorker(env), startWorker(env)];
    children.push(...workers.map((w) => w.child));
    const ready = await Promise.all(workers.map((w) => w.next()));
    expect(ready.map((m) => m.type)).toEqual(['ready', 'ready']);

    for (const worker of workers) worker.child.send({ type: 'reveal', uuid, count: 25 });
    const done = await Promise.all(workers.map((w) => w.next()));
    const outcomes = done.flatMap((m) => (m.type === 'done' ? m.outcomes : [`worker: ${JSON.stringify(m)}`]));

    expect(outcomes).toHaveLength(50);
    // Anything but these two (a worker's error, say) is shown whole.
    expect(outcomes.filter((o) => o !== 'revealed' && o !== 'not_found')).toEqual([]);
    expect(outcomes.filter((o) => o === 'revealed')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'not_found')).toHaveLength(47);
    const events = await outboxEvents(knex);
    expect(events.filter((e) => e.routingKey === 'note.accessed')).toHaveLength(3);
    expect(events.filter((e) => e.routingKey === 'note.destroyed')).toHaveLength(1);
    await expect(service.reveal(uuid, null)).resolves.toEqual({ outcome: 'not_found' });
  }, 60_000);

  /** The statements `knex` sends while `run` runs, lower-cased, outbox only. */
  async function outboxStatementsOf<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    const statements: string[] = [];
    const record = (query: { sql: string }) => { if (/`outbox`/.test(query.sql)) statements.push(query.sql.toLowerCase()); };
    knex.on('query', record);
    try {
      return { result: await run(), statements };
    } finally {
      knex.off('query', record);
    }
  }

  it('when one relay claims the outbox alone, then it reads the oldest rows with their bodies and claims them: two statements', async () => {
    await knex('outbox').delete();
    const { service } = buildNotes(knex, newKeys());
    for (let i = 0; i < 3; i += 1) await service.create(noteInput());
    const seqs = (await knex('outbox').select('seq').orderBy('seq') as Array<{ seq: number }>).map((row) => Number(row.seq));
    const { result: claimed, statements } = await outboxStatementsOf(() => new KnexOutboxStore(knex).claim(10, 30_000));
    expect(claimed.map((row) => row.seq)).toEqual(seqs);
    expect(JSON.parse(claimed[0]!.body)).toMatchObject({ event: 'note.created', version: 1 });
    expect(statements.map((sql) => sql.split(' ')[0])).toEqual(['select', 'update']);
    await expect(new KnexOutboxStore(knex).claim(10, 30_000)).resolves.toEqual([]);
  });

  it('when another relay claims rows between a claim\'s read and its update, then the claim reads back and returns only the rows it won', async () => {
    await knex('outbox').delete();
    const { service } = buildNotes(knex, newKeys());
    for (let i = 0; i < 4; i += 1) await service.create(noteInput());
    const seqs = (await knex('outbox').select('seq').orderBy('seq') as Array<{ seq: number }>).map((row) => Number(row.seq));
    const otherRelay = configureKnex(database.url);
    try {
      // The other relay's claim of the two oldest rows, not committed yet: this relay's read does not see it,
      // and its row locks hold this relay's UPDATE until it commits, which then finds those rows taken.
      const otherClaim = await otherRelay.transaction();
      await otherClaim('outbox').whereIn('seq', seqs.slice(0, 2)).update({ claim_token: 'the-other-relay', claimed_until: Date.now() + 60_000 });
      const claiming = outboxStatementsOf(() => new KnexOutboxStore(knex).claim(10, 30_000));
      await waitFor(async () => {
        const [rows] = await otherRelay.raw(
          "select count(*) as waiting from information_schema.innodb_trx t join information_schema.processlist p on p.id = t.trx_mysql_thread_id where p.db = ? and t.trx_state = 'LOCK WAIT'",
          [database.name],
        ) as [Array<{ waiting: number }>];
        return Number(rows[0]!.waiting) > 0;
      }, { description: "this relay's UPDATE waiting for the other relay's row locks" });
      await otherClaim.commit();
      const { result: claimed, statements } = await claiming;
      expect(claimed.map((row) => row.seq)).toEqual(seqs.slice(2));
      expect(JSON.parse(claimed[1]!.body)).toMatchObject({ event: 'note.created', version: 1 });
      expect(statements.map((sql) => sql.split(' ')[0])).toEqual(['select', 'update', 'select']);
      const held = await knex('outbox').select('seq', 'claim_token').orderBy('seq') as Array<{ seq: number; claim_token: string }>;
      expect(held.slice(0, 2).map((row) => row.claim_token)).toEqual(['the-other-relay', 'the-other-relay']);
      expect(new Set(held.slice(2).map((row) => row.claim_token)).size).toBe(1);
    } finally {
      await otherRelay.destroy();
    }
  });

  it('when the database cannot be reached, then the stores answer ServiceUnavailableError within seconds and ping is false', async () => {
    // Port 1 on localhost: nothing listens, the connection is refused.
    const unreachable = configureKnex('mysql://root@127.0.0.1:1/vanish_nowhere', { logger: silentLogger });
    try {
      const store = new KnexNoteStore(unreachable);
      const started = Date.now();
      await expect(store.findActive('x'.repeat(64), new Date())).rejects.toBeInstanceOf(ServiceUnavailableError);
      await expect(store.transaction(async () => 1)).rejects.toBeInstanceOf(ServiceUnavailableError);
      await expect(new KnexOutboxStore(unreachable).claim(10, 1000)).rejects.toBeInstanceOf(ServiceUnavailableError);
      await expect(store.ping()).resolves.toBe(false);
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      await unreachable.destroy();
    }
  });
});

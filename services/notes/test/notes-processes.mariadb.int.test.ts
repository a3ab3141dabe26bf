import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { ServiceUnavailableError, publicRingOf, silentLogger } from '@vanish/common';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
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

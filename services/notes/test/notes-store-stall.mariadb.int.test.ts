import type { Knex } from 'knex';
import { ServiceUnavailableError, silentLogger } from '@vanish/common';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { SERVICES } from '@vanish/testkit/services';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { KnexNoteStore } from '../src/adapters/db/knex-note-store';
import { KnexOutboxStore } from '../src/adapters/db/knex-outbox-store';
import { migrateToLatest } from '../src/adapters/db/migrate';

describe('notes stores when MariaDB stalls or is cut', () => {
  let database: TestDatabase;
  let proxy: FaultProxy;
  let knex: Knex;

  beforeAll(async () => {
    database = await createTestDatabase('vanish_notes_stall');
    proxy = await startFaultProxy({ targetHost: SERVICES.mariadb.host, targetPort: SERVICES.mariadb.port });
    knex = configureKnex(`mysql://root@127.0.0.1:${proxy.port}/${database.name}`, { logger: silentLogger });
    await migrateToLatest(knex);
  });

  afterAll(async () => {
    proxy?.restore();
    await knex?.destroy();
    await proxy?.close();
    await database?.drop();
  });

  it('when the connection stalls, then store calls answer ServiceUnavailableError at their deadline and ping is false; after restore they work', async () => {
    const store = new KnexNoteStore(knex, undefined, { operationTimeoutMs: 500 });
    const outbox = new KnexOutboxStore(knex, undefined, { operationTimeoutMs: 500 });
    await expect(store.findActive('a'.repeat(64), new Date())).resolves.toBeNull();
    proxy.stall();
    await expect(store.findActive('a'.repeat(64), new Date())).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(store.transaction(async (tx) => tx.delete('a'.repeat(64)))).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(outbox.backlog()).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(store.ping()).resolves.toBe(false);
    proxy.restore();
    const deadline = Date.now() + 15_000;
    while (!(await store.ping()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await expect(store.findActive('a'.repeat(64), new Date())).resolves.toBeNull();
  }, 30_000);

  it('when the connection is cut, then calls answer ServiceUnavailableError, and after restore the pool reconnects by itself', async () => {
    const store = new KnexNoteStore(knex);
    await expect(store.findExpired(new Date(), 1)).resolves.toEqual([]);
    proxy.cut();
    await expect(store.findExpired(new Date(), 1)).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(store.ping()).resolves.toBe(false);
    proxy.restore();
    const deadline = Date.now() + 15_000;
    while (!(await store.ping()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await expect(store.findExpired(new Date(), 1)).resolves.toEqual([]);
  }, 30_000);
});

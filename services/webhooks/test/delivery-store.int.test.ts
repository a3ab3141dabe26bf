import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import { silentLogger } from '@vanish/common';
import { configureKnex } from '@vanish/database';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { KnexDeliveryStore } from '../src/adapters/db/knex-delivery-store';
import { migrateToLatest } from '../src/adapters/db/migrate';

jest.setTimeout(60_000);

/**
 * The delivery records on both dialects: what the dispatcher reads and writes per event, and that
 * concurrent events share statements (one lookup, one upsert per batch) without one event seeing
 * or losing another's records.
 */
describe.each(['sqlite', 'mariadb'] as const)('KnexDeliveryStore on %s', (dialect) => {
  let database: TestDatabase | undefined;
  let dataDir: string;
  let knex: Knex;
  let store: KnexDeliveryStore;
  const statements: string[] = [];
  const now = new Date('2026-11-25T12:00:00Z');

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'webhooks-store-'));
    database = dialect === 'mariadb' ? await createTestDatabase('vanish_webhooks_store') : undefined;
    knex = configureKnex(database?.url ?? `sqlite:${join(dataDir, 'webhooks.db')}`, { logger: silentLogger });
    await migrateToLatest(knex);
    knex.on('query', (query: { sql: string }) => {
      if (/webhook_(deliveries|gone_notes)/.test(query.sql)) statements.push(query.sql);
    });
    store = new KnexDeliveryStore(knex);
  });
  afterAll(async () => {
    await knex?.destroy();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => { statements.length = 0; });

  it('when an event has no records and its note is not gone, then its state is empty', async () => {
    await expect(store.stateOf('fresh', 'ref-fresh')).resolves.toEqual({ records: new Map(), gone: false });
  });

  it('when a record is written and then overwritten, then the state holds the latest status and attempts, and so does the table', async () => {
    await store.record('e-over', 'note', 'failed', 1, 500, now);
    await store.record('e-over', 'note', 'delivered', 2, 204, now);
    expect((await store.stateOf('e-over', 'ref')).records).toEqual(new Map([['note', { status: 'delivered', attempts: 2 }]]));
    const rows = await knex('webhook_deliveries').where({ event_id: 'e-over' }).select('target_key', 'status', 'attempts', 'http_status');
    expect(rows.map((row) => ({ ...row, attempts: Number(row.attempts), http_status: Number(row.http_status) })))
      .toEqual([{ target_key: 'note', status: 'delivered', attempts: 2, http_status: 204 }]);
  });

  it('when a note\'s webhook is marked gone, then every later event of that note says so, and other notes do not', async () => {
    await store.markGone('ref-gone', now);
    await store.markGone('ref-gone', now);
    await store.record('e-of-gone', 'op:1', 'delivered', 1, 204, now);
    const [ofGone, other] = await Promise.all([store.stateOf('e-of-gone', 'ref-gone'), store.stateOf('e-other', 'ref-alive')]);
    expect(ofGone).toEqual({ records: new Map([['op:1', { status: 'delivered', attempts: 1 }]]), gone: true });
    expect(other).toEqual({ records: new Map(), gone: false });
  });

  it('when 60 events are recorded and looked up at once, then each gets its own answer and a handful of statements carry them all', async () => {
    const events = Array.from({ length: 60 }, (_, i) => ({ id: `e-batch-${i}`, ref: `ref-batch-${i}` }));
    await store.markGone('ref-batch-7', now);
    statements.length = 0;
    await Promise.all(events.flatMap((event, i) => [
      store.record(event.id, 'note', i % 2 === 0 ? 'delivered' : 'failed', 1 + (i % 3), i % 2 === 0 ? 204 : 503, now),
      store.record(event.id, 'op:1', 'delivered', 1, 204, now),
    ]));
    // The first record goes alone (a quiet service waits for nothing); the 119 that came meanwhile share the next two.
    expect(statements.length).toBeLessThanOrEqual(4);
    statements.length = 0;
    const states = await Promise.all(events.map((event) => store.stateOf(event.id, event.ref)));
    expect(statements.length).toBeLessThanOrEqual(3);
    states.forEach((state, i) => {
      expect(state.records).toEqual(new Map([
        ['note', { status: i % 2 === 0 ? 'delivered' : 'failed', attempts: 1 + (i % 3) }],
        ['op:1', { status: 'delivered', attempts: 1 }],
      ]));
      expect(state.gone).toBe(i === 7);
    });
  });

  it('when a record\'s promise resolves, then another connection already sees it (the message is acknowledged after that)', async () => {
    const other = configureKnex(database?.url ?? `sqlite:${join(dataDir, 'webhooks.db')}`, { logger: silentLogger });
    try {
      await Promise.all(Array.from({ length: 20 }, (_, i) => store.record(`e-durable-${i}`, 'note', 'delivered', 1, 204, now)));
      const [{ count }] = await other('webhook_deliveries').where('event_id', 'like', 'e-durable-%').count({ count: '*' });
      expect(Number(count)).toBe(20);
    } finally {
      await other.destroy();
    }
  });
});

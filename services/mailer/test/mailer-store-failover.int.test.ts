import type { Knex } from 'knex';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { SERVICES } from '@vanish/testkit/services';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { configureKnex } from '../src/adapters/db/configure-knex';
import { KnexMailerStore } from '../src/adapters/db/knex-mailer-store';
import { migrateToLatest } from '../src/adapters/db/migrate';

// The e-mail is with the SMTP server when markSent runs: a mark lost to a brief database failover
// (the writer died, the address moves) meant a second copy once the command was redelivered.
jest.setTimeout(60_000);

describe('mailer store through a brief database failover', () => {
  let db: TestDatabase;
  let proxy: FaultProxy;
  let knex: Knex;

  beforeAll(async () => {
    db = await createTestDatabase('vanish_mailer_failover');
    proxy = await startFaultProxy({ targetHost: SERVICES.mariadb.host, targetPort: SERVICES.mariadb.port });
    knex = configureKnex(db.url.replace(`:${SERVICES.mariadb.port}/`, `:${proxy.port}/`));
    await migrateToLatest(knex);
  });

  afterAll(async () => {
    await knex?.destroy();
    await proxy?.close();
    await db?.drop();
  });

  it('when the database connection is cut just as a sent e-mail is marked, then the mark goes through once it is back, and a redelivery is not sent again', async () => {
    const store = new KnexMailerStore(knex);
    const now = new Date();
    const begin = () => store.beginDelivery({ commandId: 'failover-1', addressHash: 'h'.repeat(64), kind: 'link', now, quotaPerHour: 100, quotaPerDay: 100, attemptLeaseMs: 1 });
    await expect(begin()).resolves.toMatchObject({ decision: 'send' });
    proxy.cut();
    const marked = store.markSent('failover-1', now).then(() => 'marked', (err: Error) => `failed: ${err.message}`);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    proxy.restore();
    await expect(marked).resolves.toBe('marked');
    await new Promise((resolve) => setTimeout(resolve, 5)); // past the (1 ms) lease
    await expect(begin()).resolves.toEqual({ decision: 'already_sent' });
  });
});

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import amqp from 'amqplib';
import { silentLogger } from '@vanish/common';
import { RabbitMqBus, dlqName, dlxName, retryQueueName } from '@vanish/bus';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { freePort, waitFor } from '@vanish/testkit/net';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { requireService } from '@vanish/testkit/services';
import { countersOf, fetchStats, syntheticStream, toMessage } from './support/synthetic-events';

const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const MAIN = join(__dirname, '..', 'dist', 'main.js');

describe('stats killed mid-stream (a separate process, SIGKILL) and restarted', () => {
  let db: TestDatabase;
  let publisher: RabbitMqBus;
  let child: RunningProcess | undefined;
  const tag = randomBytes(4).toString('hex');
  const exchange = `test.stats-kill.${tag}`;
  const prefix = `test.${tag}.`;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (this test runs the built service as a process)`);
    await requireService('rabbitmq');
    db = await createTestDatabase('vanish_stats_kill');
    publisher = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger });
  });

  afterAll(async () => {
    await child?.stop();
    await publisher?.close();
    const admin = await amqp.connect(AMQP_URL);
    const channel = await admin.createChannel();
    for (const q of ['stats.note-events', 'stats.heartbeats']) {
      for (const name of [q, dlqName(q), ...[200, 1000, 5000, 30000].map((d) => retryQueueName(q, d))]) await channel.deleteQueue(`${prefix}${name}`).catch(() => undefined);
    }
    await channel.deleteExchange(exchange).catch(() => undefined);
    await channel.deleteExchange(dlxName(exchange)).catch(() => undefined);
    await admin.close();
    await db?.drop();
  });

  const start = async (port: number, adminPort: number) => runProcess({
    script: MAIN,
    env: {
      PORT: String(port), ADMIN_PORT: String(adminPort), HOST: '127.0.0.1', DATABASE_URL: db.url, AMQP_URL,
      AMQP_EXCHANGE: exchange, AMQP_QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn', NODE_ENV: 'test',
    },
    readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
    readyTimeoutMs: 30_000,
  });

  it('when the process dies mid-stream and comes back, then no event is lost and none is counted twice', async () => {
    const port = await freePort();
    const adminPort = await freePort();
    child = await start(port, adminPort);

    const { events, expected } = syntheticStream(600, Date.now(), 5);
    const messages = events.map(toMessage);
    const chunk = Math.ceil(messages.length / 10);
    let sent = 0;
    // The first chunks arrive while it runs...
    while (sent < 3 * chunk) {
      await publisher.publish(messages.slice(sent, sent + chunk));
      sent += chunk;
    }
    await waitFor(async () => (await fetchStats(port)).total_notes_created > 0, { description: 'counting started', intervalMs: 10 });
    const seenBeforeKill = await fetchStats(port);
    child.kill('SIGKILL');
    await child.exited;
    // ...the rest while it is dead: the broker keeps them in the durable queue.
    while (sent < messages.length) {
      await publisher.publish(messages.slice(sent, sent + chunk));
      sent += chunk;
    }
    // Some of what was in flight at the kill was committed but not acked: it comes again as a duplicate.
    child = await start(port, adminPort);
    const stats = await waitFor(async () => {
      const s = await fetchStats(port);
      return s.total_notes_created === expected.total_notes_created && s.destroyed_notes === expected.destroyed_notes ? s : undefined;
    }, { description: 'every event counted after the restart', timeoutMs: 60_000, intervalMs: 100 });
    expect(seenBeforeKill.total_notes_created).toBeLessThan(expected.total_notes_created);
    expect(countersOf(stats)).toEqual(expected);
    // And nothing more arrives later (a double count would show up as an overshoot).
    await new Promise((r) => setTimeout(r, 1_000));
    expect(countersOf(await fetchStats(port))).toEqual(expected);
  }, 120_000);
});

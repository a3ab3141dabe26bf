import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { KeyRing, ManualClock, publicRingOf, silentLogger, type Clock, type Registry } from '@vanish/common';
import { createNotesService, loadNotesConfig, type NotesService } from '@vanish/notes';
import { requireService } from '@vanish/testkit/services';
import { deleteRabbitObjects } from '@vanish/testkit/rabbitmq';
import { createWebhooksService, loadWebhooksConfig, type WebhooksService } from '../../src';

export const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

export interface WorldOptions {
  prefix: string;
  notesDatabaseUrl?: string;
  webhooksDatabaseUrl?: string;
  webhooksEnv?: Record<string, string>;
  notesClock?: Clock;
  /** The test runs the webhooks service itself (as a process): only its queue is declared here. */
  externalWebhooks?: boolean;
}

/**
 * The notes service and the webhooks service as deployed, talking only through RabbitMQ on names
 * of this test file's own. A tap queue bound to `#` stands in for stats (the relay publishes
 * mandatory messages, so every routing key needs a queue) and shows what the broker carries.
 */
export async function startWorld(options: WorldOptions) {
  await requireService('rabbitmq');
  const id = randomBytes(4).toString('hex');
  const tag = `test.wh-${options.prefix}.${id}`;
  const exchange = tag;
  const queue = `${tag}.webhooks`;
  const tap = `${tag}.tap`;
  const dataDir = mkdtempSync(join(tmpdir(), `webhooks-${options.prefix}-`));
  const privateRing = KeyRing.generate('w1');
  const admin: ChannelModel = await amqp.connect(AMQP_URL);
  admin.on('error', () => undefined);
  const channel: Channel = await admin.createChannel();
  channel.on('error', () => undefined);
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(tap, { durable: false });
  await channel.bindQueue(tap, exchange, '#');

  const webhooksEnv = (): Record<string, string> => ({
    DATA_DIR: dataDir,
    DATABASE_URL: options.webhooksDatabaseUrl ?? `sqlite:${join(dataDir, 'webhooks.db')}`,
    AMQP_URL, AMQP_EXCHANGE: exchange, WEBHOOK_QUEUE: queue,
    WEBHOOK_PRIVATE_KEYS: privateRing.serialize(),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_RETRY_DELAYS_MS: '300,1000,2500',
    WEBHOOK_QUEUE_WATCH_INTERVAL_MS: '200',
    ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent',
    ...options.webhooksEnv,
  });
  let webhooks: WebhooksService | undefined;
  if (!options.externalWebhooks) {
    webhooks = await createWebhooksService(loadWebhooksConfig(webhooksEnv()), { logger: silentLogger });
    await webhooks.start();
  }

  const notes: NotesService = await createNotesService(loadNotesConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: options.notesDatabaseUrl ?? `sqlite:${join(dataDir, 'notes.db')}`,
    AMQP_URL, AMQP_EXCHANGE: exchange,
    WEBHOOK_PUBLIC_KEYS: publicRingOf(privateRing).serialize(),
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    SWEEP_INTERVAL_MS: '200', HEARTBEAT_INTERVAL_MS: '60000',
    PUBLIC_BASE_URL: 'https://vanish.test', PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent',
  }), { logger: silentLogger, clock: options.notesClock, kdf: { N: 1024, r: 8, p: 1 } });
  const { port: notesPort } = await notes.start();

  const world = {
    queue, notes, notesPort, dataDir, privateRing, webhooksEnv,
    get webhooks() { return webhooks!; },
    async create(body: Record<string, unknown>) {
      const res = await fetch(`http://127.0.0.1:${notesPort}/api/create.php`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
      });
      const json = (await res.json()) as { uuid: string; note_ref: string; webhook_secret: string; error?: string; code?: string; details?: { parameter: string | null } };
      return { status: res.status, ...json };
    },
    /** The reveal form, as a browser behind the gateway posts it (X-Forwarded-For set by the gateway). */
    async reveal(uuid: string, passcode: string | null, access = { ip: '203.0.113.7', userAgent: 'webhook-test/1.0' }) {
      const page = await (await fetch(`http://127.0.0.1:${notesPort}/${uuid}`)).text();
      const token = /name="form_token" value="([^"]+)"/.exec(page)?.[1];
      if (!token) throw new Error('no form token on the note page');
      const form = new URLSearchParams({ form_token: token, ...(passcode === null ? {} : { passcode }) });
      const res = await fetch(`http://127.0.0.1:${notesPort}/${uuid}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', 'x-forwarded-for': access.ip, 'user-agent': access.userAgent },
        body: form.toString(),
      });
      await res.text();
      return res.status;
    },
    /** Raw bodies the broker carried (from the tap), removed from it. */
    async drainTap(): Promise<string[]> {
      const bodies: string[] = [];
      for (;;) {
        const message = await channel.get(tap, { noAck: true });
        if (!message) return bodies;
        bodies.push(message.content.toString('utf8'));
      }
    },
    /** Bodies in the webhooks dead-letter queue, removed. */
    async drainDeadLetters(): Promise<string[]> {
      const c = await admin.createChannel();
      c.on('error', () => undefined);
      const bodies: string[] = [];
      try {
        for (;;) {
          const message = await c.get(`${queue}.dlq`, { noAck: true });
          if (!message) return bodies;
          bodies.push(message.content.toString('utf8'));
        }
      } finally {
        await c.close().catch(() => undefined);
      }
    },
    async messagesIn(name: string): Promise<number> {
      const c = await admin.createChannel();
      c.on('error', () => undefined);
      try {
        return (await c.checkQueue(name)).messageCount;
      } catch {
        return -1;
      } finally {
        await c.close().catch(() => undefined);
      }
    },
    /** Stops the webhooks service and starts a new one on the same database and queue. */
    async restartWebhooks(): Promise<void> {
      await webhooks?.stop();
      webhooks = await createWebhooksService(loadWebhooksConfig(webhooksEnv()), { logger: silentLogger });
      await webhooks.start();
    },
    async close(): Promise<void> {
      await notes.stop().catch(() => undefined);
      await webhooks?.stop().catch(() => undefined);
      webhooks = undefined;
      await admin.close().catch(() => undefined);
      await deleteRabbitObjects(tag).catch(() => undefined);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}

export type World = Awaited<ReturnType<typeof startWorld>>;

/** The value of one metric series (labels matched exactly as given), 0 when absent. */
export async function metricValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  if (!metric) return 0;
  const values = (metric as unknown as { values: Array<{ value: number; labels: Record<string, string> }> }).values;
  return values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((sum, v) => sum + v.value, 0);
}

export { ManualClock };

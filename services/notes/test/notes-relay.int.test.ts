import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, silentLogger, type IncomingMessage, type MessageConsumer, type MessagePublisher } from '@vanish/common';
import amqp from 'amqplib';
import { InProcessBus, RabbitMqBus, dlqName, dlxName } from '@vanish/bus';
import { waitFor } from '@vanish/testkit/net';
import { requireService } from '@vanish/testkit/services';
import { createNotesService, loadNotesConfig, type NotesService } from '../src';
import { LogCapture, postJson } from './support/api-client';

/**
 * The composition root's messaging wiring: the outbox relayed to a bus given by the all-in-one
 * (in-process) or found at AMQP_URL (RabbitMQ), heartbeats on health.notes, and, without either,
 * an outbox that keeps its rows and a log line that says so (DECISIONS 10).
 */
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';

type Bus = MessagePublisher & MessageConsumer & { close(): Promise<void> };

/** Deletes this file's queues and exchanges from the shared broker. */
async function removeRabbitObjects(exchange: string, queue: string): Promise<void> {
  const connection = await amqp.connect(AMQP_URL);
  try {
    const channel = await connection.createChannel();
    for (const name of [queue, dlqName(queue)]) await channel.deleteQueue(name).catch(() => undefined);
    for (const name of [exchange, dlxName(exchange)]) await channel.deleteExchange(name).catch(() => undefined);
  } finally {
    await connection.close().catch(() => undefined);
  }
}

interface Wiring { env: Record<string, string>; bus?: Bus; listener: Bus; cleanup(): Promise<void> }

const setups: Array<[string, (exchange: string, queue: string) => Promise<Wiring>]> = [
  ['an in-process bus given by the all-in-one', async () => {
    const bus = new InProcessBus();
    return { env: {}, bus, listener: bus, cleanup: async () => undefined };
  }],
  ['RabbitMQ at AMQP_URL', async (exchange, queue) => {
    await requireService('rabbitmq');
    const listener = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger });
    return { env: { AMQP_URL, AMQP_EXCHANGE: exchange }, listener, cleanup: () => removeRabbitObjects(exchange, queue) };
  }],
];

describe.each(setups)('notes relaying through %s', (_name, setup) => {
  let service: NotesService;
  let base: string;
  let listener: Bus;
  let wiring: Wiring;
  let dataDir: string;
  const received: IncomingMessage[] = [];
  const prefix = `notes-relay-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'notes-relay-'));
    wiring = await setup(prefix, `${prefix}.all`);
    listener = wiring.listener;
    await listener.consume({ queue: `${prefix}.all`, bindings: ['note.*', 'mail.send', 'health.notes'] }, async (message) => {
      received.push(message);
    });
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`, HEARTBEAT_INTERVAL_MS: '200',
      ...wiring.env,
    });
    service = await createNotesService(config, { logger: silentLogger, bus: wiring.bus });
    base = `http://127.0.0.1:${(await service.start()).port}`;
  });

  afterAll(async () => {
    await service?.stop();
    await listener?.close();
    await wiring?.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when a note is created with send_link_email, then note.created and a sealed mail.send arrive, and the outbox empties', async () => {
    const { json } = await postJson(base, { content: 'relay me', expiry_type: 'both', send_link_email: 'friend@example.org' });
    const created = await waitFor(() => received.find((m) => m.routingKey === 'note.created'), { description: 'note.created' });
    const event = JSON.parse(created.body);
    expect(event).toMatchObject({ event: 'note.created', version: 1, data: { expiry_type: 'both' } });
    expect(created.body).not.toContain(json.uuid);
    const mail = await waitFor(() => received.find((m) => m.routingKey === 'mail.send'), { description: 'mail.send' });
    expect(mail.body).not.toContain('friend@example.org');
    expect(mail.body).not.toContain(json.uuid);
    expect(JSON.parse(mail.body).sealed).toMatch(/^x25519:m1\./); // sealed to the mailer (DECISIONS 1)
    await waitFor(async () => (await service.outbox.backlog()).count === 0, { description: 'outbox drained' });
  });

  it('when heartbeats are due, then health.notes reports the database healthy and encryption available', async () => {
    const beat = await waitFor(() => received.find((m) => m.routingKey === 'health.notes'), { description: 'a heartbeat' });
    expect(JSON.parse(beat.body)).toMatchObject({
      event: 'service.heartbeat', data: { service: 'notes', components: { database: 'healthy', encryption: 'available' } },
    });
  });
});

describe('notes without AMQP_URL, outside the all-in-one', () => {
  it('when notes are created, then the outbox keeps its rows and the log says nothing is relayed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'notes-norelay-'));
    const logs = new LogCapture();
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`,
    });
    const service = await createNotesService(config, { logger: createLogger('notes', 'info', logs) });
    try {
      const base = `http://127.0.0.1:${(await service.start()).port}`;
      expect((await postJson(base, { content: 'kept' })).status).toBe(200);
      expect((await service.outbox.backlog()).count).toBe(1);
      await waitFor(() => logs.text().includes('AMQP_URL is not set: events and mail commands stay in the outbox'), { description: 'the log line' });
    } finally {
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

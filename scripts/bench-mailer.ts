// `node scripts/dist/bench-mailer.js` (after `npm run build && tsc -p scripts/tsconfig.bench.json`):
// e-mails per second (1) through the mailer's pooled SMTP transport straight to a local SMTP sink
// (smtp-server), by pool size, and (2) through the whole mailer pipeline as a separate process:
// RabbitMQ (sealed mail.send commands) → open, idempotency and quota records in MariaDB → pooled
// SMTP → sink, counted until every e-mail arrived. Env: BENCH_MAIL_COUNT (default 2000),
// BENCH_MAIL_CONCURRENCY (50), MARIADB_URL (mysql://root@127.0.0.1:3306), AMQP_URL.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import mysql from 'mysql2/promise';
import { SMTPServer } from 'smtp-server';
import { ConsumerSealer, KeyRing, MAIL_SEAL_PURPOSE, publicRingOf, silentLogger } from '@vanish/common';
import { RabbitMqBus } from '@vanish/bus';
import { SmtpMailTransport } from '@vanish/mailer';
import { ROOT, fmt, log, loadAverage, machine, sleep, startNode, waitReady } from './bench-lib';

const COUNT = Number(process.env.BENCH_MAIL_COUNT ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_MAIL_CONCURRENCY ?? 50);
const MARIADB_URL = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

/** A real SMTP server that accepts everything and counts what it received. */
async function startSink(): Promise<{ url: string; received: () => number; close(): Promise<void> }> {
  let received = 0;
  const server = new SMTPServer({
    secure: false, logger: false, disabledCommands: ['STARTTLS', 'AUTH'], maxClients: 1000,
    onData(stream, _session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => { received += 1; callback(); });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return { url: `smtp://127.0.0.1:${port}`, received: () => received, close: () => new Promise((r) => server.close(() => r())) };
}

const email = (i: number) => ({
  messageId: `<bench-${i}-${randomUUID()}@vanish.bench>`, from: 'vanish <notes@vanish.bench>', to: `reader${i}@example.com`,
  subject: 'A note was shared with you on vanish', text: `Hello,\n\nhttps://vanish.bench/${randomUUID()}\n`,
  html: '<p>Hello,</p>', headers: { 'List-Unsubscribe': '<https://vanish.bench/unsubscribe/u1.x.y>' },
});

async function transportOnly(poolSize: number): Promise<number> {
  const sink = await startSink();
  const transport = new SmtpMailTransport({ url: sink.url, poolSize, timeoutMs: 30_000 });
  await Promise.all(Array.from({ length: 20 }, (_, i) => transport.send(email(i)))); // warm the pool
  const started = process.hrtime.bigint();
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < COUNT) {
      const i = next++;
      await transport.send(email(i));
    }
  }));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await transport.close();
  await sink.close();
  return COUNT / seconds;
}

async function pipeline(): Promise<number> {
  const sink = await startSink();
  const dbName = `vanish_bench_mailer_${randomBytes(4).toString('hex')}`;
  const root = await mysql.createConnection(MARIADB_URL);
  await root.query(`CREATE DATABASE \`${dbName}\``);
  const exchange = `bench.mailer.${randomBytes(4).toString('hex')}`;
  const queue = `${exchange}.mail-commands`;
  const ring = KeyRing.generate('b1');
  const sealer = new ConsumerSealer(publicRingOf(ring), MAIL_SEAL_PURPOSE);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-mailer-'));
  const adminPort = 19000 + Math.floor(Math.random() * 1000);
  const mailer = startNode('mailer', [join(ROOT, 'services/mailer/dist/main.js')], {
    PORT: '0', ADMIN_PORT: String(adminPort), DATA_DIR: dataDir, DATABASE_URL: `${MARIADB_URL}/${dbName}`,
    AMQP_URL, AMQP_EXCHANGE: exchange, MAIL_QUEUE: queue, SMTP_URL: sink.url, MAIL_PRIVATE_KEYS: ring.serialize(),
    MAIL_QUOTA_PER_HOUR: '1000000', MAIL_QUOTA_PER_DAY: '1000000', LOG_LEVEL: 'warn', MAIL_PREFETCH: String(CONCURRENCY),
  }, dataDir);
  const bus = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger });
  try {
    await waitReady(mailer, `http://127.0.0.1:${adminPort}/readyz`);
    await sleep(1000); // the consumer binds its queue after connecting
    const commands = Array.from({ length: COUNT }, (_, i) => {
      const id = randomUUID();
      const sealed = sealer.seal(JSON.stringify({ kind: 'notification', to: `reader${i}@example.com`, read_at: '2026-01-01 00:00:00', views_left: 1 }));
      return { id, routingKey: 'mail.send', body: JSON.stringify({ id, event: 'mail.send', version: 1, timestamp: new Date().toISOString(), sealed }) };
    });
    const started = process.hrtime.bigint();
    for (let i = 0; i < commands.length; i += 200) await bus.publish(commands.slice(i, i + 200));
    const deadline = Date.now() + 300_000;
    while (sink.received() < COUNT && Date.now() < deadline) await sleep(20);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (sink.received() < COUNT) throw new Error(`only ${sink.received()} of ${COUNT} e-mails arrived`);
    return COUNT / seconds;
  } finally {
    await mailer.stop();
    await bus.close();
    await root.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
    await root.end();
    await sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  log(`mailer bench: ${COUNT} e-mails, ${CONCURRENCY} in flight; ${machine()}; load ${loadAverage()}`);
  const rows: string[] = [];
  for (const pool of [1, 5]) {
    const rate = await transportOnly(pool);
    log(`pooled SMTP transport, pool ${pool}: ${fmt(rate)} e-mails/s`);
    rows.push(`| SmtpMailTransport → local SMTP sink, pool of ${pool} | ${fmt(rate)} |`);
  }
  const rate = await pipeline();
  log(`full pipeline (RabbitMQ → mailer process with MariaDB records → SMTP pool of 5): ${fmt(rate)} e-mails/s`);
  rows.push(`| RabbitMQ → mailer process (MariaDB records) → SMTP pool of 5 → sink | ${fmt(rate)} |`);
  process.stdout.write(['| path | e-mails/s |', '|---|---|', ...rows, ''].join('\n'));
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-mailer failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

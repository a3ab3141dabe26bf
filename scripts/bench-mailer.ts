// `node scripts/dist/bench-mailer.js` (after `npm run build && tsc -p scripts/tsconfig.bench.json`):
// e-mails per second (1) through the mailer's pooled SMTP transport straight to a local SMTP sink
// (smtp-server), by pool size, and (2) through the whole mailer pipeline as a separate process:
// RabbitMQ (sealed mail.send commands) → open, idempotency and quota records in MariaDB → pooled
// SMTP → sink, counted until every e-mail arrived, then checked that none arrived twice (by Message-ID). For the
// pipeline it prints the CPU µs per e-mail of every process on the path (the mailer, MariaDB, RabbitMQ, and
// this process: publisher and sink) and the MariaDB statements per e-mail. Env: BENCH_MAIL_COUNT (default 2000),
// BENCH_MAIL_CONCURRENCY (50), BENCH_CPU_PROF=1 (the mailer writes a CPU profile into its data directory,
// kept and printed), BENCH_MAIL_SMTP_POOL (the mailer's SMTP_POOL_SIZE in the pipeline, 10 as the mailer's default; the transport alone is
// also measured with that many connections, and the pipeline's share is of that figure), BENCH_MAILER_MAIN (the mailer's entry point, default services/mailer/dist/main.js: an
// older build for a back-to-back A/B), MARIADB_URL (mysql://root@127.0.0.1:3306), AMQP_URL.
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
import { rabbitmqctl, serviceNodeFlags, serviceNodeOptions } from './bench-topology';
import {
  ROOT, STATEMENT_COUNTERS, cleanUpOnSignal, cpuSeconds, fmt, log, loadAverage, machine, mariadbPid, oldestPid, sleep, startNode, statementCounts, stopAndCleanUp, waitReady,
  type Child,
} from './bench-lib';

const COUNT = Number(process.env.BENCH_MAIL_COUNT ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_MAIL_CONCURRENCY ?? 50);
const MARIADB_URL = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
const AMQP_BASE = (process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672').replace(/\/+$/, '');
const CPU_PROFILE = process.env.BENCH_CPU_PROF === '1';
/** The mailer's SMTP_POOL_SIZE in the pipeline (its default); the transport alone is measured at 1, 5 and this size. */
const SMTP_POOL = Number(process.env.BENCH_MAIL_SMTP_POOL ?? 10);
const MAILER_MAIN = process.env.BENCH_MAILER_MAIN ?? join(ROOT, 'services/mailer/dist/main.js');

interface Sink {
  url: string;
  received(): number;
  /** E-mails whose Message-ID the sink had already received. */
  duplicates(): number;
  close(): Promise<void>;
}

/** A real SMTP server that accepts everything and counts what it received, and how many Message-IDs came twice. */
async function startSink(): Promise<Sink> {
  let received = 0;
  let duplicates = 0;
  const messageIds = new Set<string>();
  const server = new SMTPServer({
    secure: false, logger: false, disabledCommands: ['STARTTLS', 'AUTH'], maxClients: 1000,
    onData(stream, _session, callback) {
      let head = '';
      stream.on('data', (chunk: Buffer) => { if (head.length < 8192) head += chunk.toString('latin1'); });
      stream.on('end', () => {
        received += 1;
        const messageId = /^Message-ID:\s*(\S+)/im.exec(head)?.[1];
        if (messageId !== undefined) {
          if (messageIds.has(messageId)) duplicates += 1;
          messageIds.add(messageId);
        }
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    url: `smtp://127.0.0.1:${port}`, received: () => received, duplicates: () => duplicates,
    close: () => new Promise((r) => server.close(() => r())),
  };
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

interface PipelineResult {
  perSecond: number;
  duplicates: number;
  /** CPU µs per e-mail by process. */
  cpu: Array<[string, number]>;
  /** MariaDB statements per e-mail by counter. */
  statements: Array<[string, number]>;
}

async function pipeline(): Promise<PipelineResult> {
  // Everything the run creates is removed at the end, or on Ctrl-C: its database, its vhost (exchange,
  // queues, retry and dead-letter queues), the mailer process, the sink.
  const children: Child[] = [];
  const cleanups: (() => Promise<void>)[] = [];
  cleanUpOnSignal(children, cleanups);
  const suffix = randomBytes(4).toString('hex');
  const sink = await startSink();
  cleanups.push(() => sink.close());
  const dbName = `vanish_bench_mailer_${suffix}`;
  const root = await mysql.createConnection(MARIADB_URL);
  cleanups.push(async () => {
    await root.query(`DROP DATABASE IF EXISTS \`${dbName}\``);
    await root.end();
  });
  await root.query(`CREATE DATABASE \`${dbName}\``);
  const vhost = `vanish-bench-mailer-${suffix}`;
  rabbitmqctl('add_vhost', vhost);
  cleanups.push(async () => rabbitmqctl('delete_vhost', vhost));
  rabbitmqctl('set_permissions', '-p', vhost, 'guest', '.*', '.*', '.*');
  const amqpUrl = `${AMQP_BASE}/${encodeURIComponent(vhost)}`;
  const exchange = 'bench.mailer';
  const queue = `${exchange}.mail-commands`;
  const ring = KeyRing.generate('b1');
  const sealer = new ConsumerSealer(publicRingOf(ring), MAIL_SEAL_PURPOSE);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-mailer-'));
  cleanups.push(async () => {
    if (CPU_PROFILE) log(`mailer CPU profile in ${dataDir} (kept)`);
    else rmSync(dataDir, { recursive: true, force: true });
  });
  const adminPort = 19000 + Math.floor(Math.random() * 1000);
  const nodeArgs = CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${dataDir}`] : [];
  // As the image starts it (node flag and NODE_OPTIONS), like the services of scripts/bench.ts.
  const mailer = startNode('mailer', [...nodeArgs, ...serviceNodeFlags(), MAILER_MAIN], {
    NODE_OPTIONS: serviceNodeOptions(), PORT: '0', ADMIN_PORT: String(adminPort), DATA_DIR: dataDir, DATABASE_URL: `${MARIADB_URL}/${dbName}`,
    AMQP_URL: amqpUrl, AMQP_EXCHANGE: exchange, MAIL_QUEUE: queue, SMTP_URL: sink.url, SMTP_POOL_SIZE: String(SMTP_POOL), MAIL_PRIVATE_KEYS: ring.serialize(),
    MAIL_QUOTA_PER_HOUR: '1000000', MAIL_QUOTA_PER_DAY: '1000000', LOG_LEVEL: 'warn', MAIL_PREFETCH: String(CONCURRENCY),
  }, dataDir);
  children.push(mailer);
  const bus = await RabbitMqBus.connect({ url: amqpUrl, exchange, logger: silentLogger });
  cleanups.push(() => bus.close());
  try {
    await waitReady(mailer, `http://127.0.0.1:${adminPort}/readyz`);
    await sleep(1000); // the consumer binds its queue after connecting
    const commands = Array.from({ length: COUNT }, (_, i) => {
      const id = randomUUID();
      const sealed = sealer.seal(JSON.stringify({ kind: 'notification', to: `reader${i}@example.com`, read_at: '2026-01-01 00:00:00', views_left: 1 }));
      return { id, routingKey: 'mail.send', body: JSON.stringify({ id, event: 'mail.send', version: 1, timestamp: new Date().toISOString(), sealed }) };
    });
    const processes: Record<string, number | undefined> = {
      mailer: mailer.process.pid, mariadb: mariadbPid(), rabbitmq: oldestPid('beam.smp'),
    };
    const cpuBefore = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds([pid])]));
    const ownBefore = process.cpuUsage();
    const statementsBefore = await statementCounts(root);
    const started = process.hrtime.bigint();
    for (let i = 0; i < commands.length; i += 200) await bus.publish(commands.slice(i, i + 200));
    const deadline = Date.now() + 300_000;
    while (sink.received() < COUNT && Date.now() < deadline) await sleep(20);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const own = process.cpuUsage(ownBefore);
    const cpuAfter = Object.fromEntries(Object.entries(processes).map(([name, pid]) => [name, cpuSeconds([pid])]));
    const statementsAfter = await statementCounts(root);
    if (sink.received() < COUNT) throw new Error(`only ${sink.received()} of ${COUNT} e-mails arrived`);
    // A command sent twice would arrive after its first copy: give the acks time to settle, then count.
    await sleep(2_000);
    const cpu: Array<[string, number]> = Object.keys(processes).map((name) => [name, ((cpuAfter[name] - cpuBefore[name]) * 1e6) / COUNT]);
    cpu.push(['bench (publisher and sink)', (own.user + own.system) / COUNT]);
    const statements: Array<[string, number]> = STATEMENT_COUNTERS.map((name) => [name, (statementsAfter[name] - statementsBefore[name]) / COUNT]);
    return { perSecond: COUNT / seconds, duplicates: sink.duplicates() + Math.max(0, sink.received() - COUNT), cpu, statements };
  } finally {
    await stopAndCleanUp(children, cleanups);
  }
}

async function main(): Promise<void> {
  log(`mailer bench: ${COUNT} e-mails, ${CONCURRENCY} in flight, mailer ${MAILER_MAIN}; ${machine()}; load ${loadAverage()}`);
  const rows: string[] = [];
  const transportRates = new Map<number, number>();
  for (const pool of [...new Set([1, 5, SMTP_POOL])]) {
    const rate = await transportOnly(pool);
    transportRates.set(pool, rate);
    log(`pooled SMTP transport, pool ${pool}: ${fmt(rate)} e-mails/s`);
    rows.push(`| SmtpMailTransport → local SMTP sink, pool of ${pool} | ${fmt(rate)} |`);
  }
  const result = await pipeline();
  const share = result.perSecond / transportRates.get(SMTP_POOL)!;
  log(`full pipeline (RabbitMQ → mailer process with MariaDB records → SMTP pool of ${SMTP_POOL}): ${fmt(result.perSecond)} e-mails/s, ${result.duplicates} sent twice; ${fmt(100 * share)} % of the transport alone with ${SMTP_POOL} connections (issue 18's goal: 50 %)`);
  log(`CPU µs per e-mail: ${result.cpu.map(([name, us]) => `${name} ${fmt(us)}`).join(', ')}`);
  log(`MariaDB statements per e-mail: ${result.statements.map(([name, n]) => `${name} ${fmt(n, 2)}`).join(', ')}`);
  log(`load ${loadAverage()}`);
  rows.push(`| RabbitMQ → mailer process (MariaDB records) → SMTP pool of ${SMTP_POOL} → sink | ${fmt(result.perSecond)} |`);
  if (result.duplicates > 0) throw new Error(`${result.duplicates} e-mails arrived twice`);
  process.stdout.write(['| path | e-mails/s |', '|---|---|', ...rows, ''].join('\n'));
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-mailer failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

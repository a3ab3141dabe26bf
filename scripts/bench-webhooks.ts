// `node scripts/dist/bench-webhooks.js` (after `npm run build && tsc -p scripts/tsconfig.bench.json`):
// (1) webhook lag under load, from a reveal to the receiver: the notes service in this process
// (MariaDB, outbox relay to RabbitMQ) and the webhooks service as a separate process (MariaDB
// records), BENCH_WEBHOOK_NOTES one-view notes with a webhook_url revealed BENCH_WEBHOOK_CONCURRENCY
// at a time, started at BENCH_WEBHOOK_RATE reveals per second (default 100; 0: each as soon as the one
// before it ends, which saturates the service so that lag measures the backlog, not the path); lag =
// receiver arrival of note.accessed minus the start of its reveal; p50 and p99 (goal p99 < 1 s). (2) deliveries per second to one receiver: BENCH_WEBHOOK_EVENTS events sealed as
// notes seals them, published straight to the broker, counted until all arrived.
// Env: MARIADB_URL (mysql://root@127.0.0.1:3306), AMQP_URL; BENCH_WEBHOOKS_MAIN runs another build of the
// service (an A/B against a copy of an older services/webhooks/dist kept inside the repository tree, so that
// its packages resolve).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import {
  ConsumerSealer, KeyRing, WEBHOOK_SEAL_PURPOSE, WEBHOOK_TARGET_SEAL_PURPOSE, publicRingOf, silentLogger,
} from '@vanish/common';
import { RabbitMqBus } from '@vanish/bus';
import { createNotesService, loadNotesConfig } from '@vanish/notes';
import { ROOT, fmt, freePort, log, loadAverage, machine, percentile, sleep, startNode, waitReady } from './bench-lib';
import { serviceNodeFlags, serviceNodeOptions } from './bench-topology';

const NOTES = Number(process.env.BENCH_WEBHOOK_NOTES ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 20);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 100);
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 3000);
const MARIADB_URL = process.env.MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';
const AMQP_URL = process.env.AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';
const WEBHOOKS_MAIN = process.env.BENCH_WEBHOOKS_MAIN ?? join(ROOT, 'services/webhooks/dist/main.js');

/** A receiver that answers 204 at once and notes when each event id arrived. */
async function startReceiver() {
  const arrivals = new Map<string, { at: number; noteRef: string; event: string }>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const id = String(req.headers['webhook-id']);
      const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: string; data: { note_ref: string } };
      if (!arrivals.has(id)) arrivals.set(id, { at, noteRef: payload.data.note_ref, event: payload.event });
      res.statusCode = 204;
      res.end();
    });
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hook`, arrivals, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

async function main(): Promise<void> {
  log(`webhooks bench: ${NOTES} notes revealed ${CONCURRENCY} at a time, ${EVENTS} events to one receiver; ${machine()}; load ${loadAverage()}`);
  const tag = randomBytes(4).toString('hex');
  const root = await mysql.createConnection(MARIADB_URL);
  const dbNotes = `vanish_bench_wh_notes_${tag}`;
  const dbHooks = `vanish_bench_wh_${tag}`;
  await root.query(`CREATE DATABASE \`${dbNotes}\``);
  await root.query(`CREATE DATABASE \`${dbHooks}\``);
  const exchange = `bench.webhooks.${tag}`;
  const queue = `${exchange}.note-events`;
  const ring = KeyRing.generate('wb1');
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const receiver = await startReceiver();
  const adminPort = await freePort();
  // As the image starts it (node flag and NODE_OPTIONS), like the services of scripts/bench.ts.
  const webhooks = startNode('webhooks', [...serviceNodeFlags(), WEBHOOKS_MAIN], {
    NODE_OPTIONS: serviceNodeOptions(), ADMIN_PORT: String(adminPort), HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `${MARIADB_URL}/${dbHooks}`, AMQP_URL,
    AMQP_EXCHANGE: exchange, WEBHOOK_QUEUE: queue, WEBHOOK_PRIVATE_KEYS: ring.serialize(), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_HOST_CONCURRENCY: '32', WEBHOOK_PREFETCH: '64', LOG_LEVEL: 'warn',
  }, dataDir);
  // Connected only for step (2): left idle through step (1) on a loaded machine, its heartbeats lapsed and the broker closed it.
  let bus: RabbitMqBus | undefined;
  // Stands in for stats: the relay publishes mandatory messages, so note.created needs a queue too.
  const tap = `${exchange}.tap`;
  let notes: Awaited<ReturnType<typeof createNotesService>> | undefined;
  try {
    await waitReady(webhooks, `http://127.0.0.1:${adminPort}/readyz`);
    const amqp = await import('amqplib');
    const admin = await amqp.connect(AMQP_URL);
    const channel = await admin.createChannel();
    await channel.assertQueue(tap, { durable: false, arguments: { 'x-max-length': 1 } });
    await channel.bindQueue(tap, exchange, 'note.created');

    // (1) lag from a reveal to the receiver
    notes = await createNotesService(loadNotesConfig({
      DATA_DIR: dataDir, DATABASE_URL: `${MARIADB_URL}/${dbNotes}`, AMQP_URL, AMQP_EXCHANGE: exchange,
      WEBHOOK_PUBLIC_KEYS: publicRingOf(ring).serialize(), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      PUBLIC_BASE_URL: 'https://vanish.bench', PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', HEARTBEAT_INTERVAL_MS: '60000',
    }), {
      logger: silentLogger,
      // The bench measures the webhook path: on a loaded shared machine notes' 3 s database deadline failed its setup.
      operationTimeoutMs: 30_000,
    });
    await notes.start();
    const created: Array<{ uuid: string; noteRef: string }> = [];
    for (let i = 0; i < NOTES; i += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, NOTES - i) }, () =>
        untilAvailable(() => notes!.notes.create({ content: 'bench', expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null, webhookUrl: receiver.url }))));
      for (const note of batch) created.push({ uuid: note.uuid, noteRef: note.noteRef! });
    }
    const revealedAt = new Map<string, number>();
    let next = 0;
    const started = performance.now();
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (next < created.length) {
        const index = next++;
        const note = created[index]!;
        // Paced: the index-th reveal starts at its slot of the schedule, not earlier.
        if (RATE > 0) await sleep(Math.max(0, started + (index * 1000) / RATE - performance.now()));
        revealedAt.set(note.noteRef, performance.now());
        await untilAvailable(() => notes!.notes.reveal(note.uuid, null, null, { ipAddress: '203.0.113.1', userAgent: 'bench' }));
      }
    }));
    const revealSeconds = (performance.now() - started) / 1000;
    const accessed = () => [...receiver.arrivals.values()].filter((a) => a.event === 'note.accessed');
    const deadline = Date.now() + 300_000;
    while (accessed().length < NOTES && Date.now() < deadline) await sleep(20);
    if (accessed().length < NOTES) throw new Error(`only ${accessed().length} of ${NOTES} note.accessed webhooks arrived`);
    const lags = accessed().map((a) => a.at - revealedAt.get(a.noteRef)!).sort((a, b) => a - b);
    const p50 = percentile(lags, 50);
    const p99 = percentile(lags, 99);
    log(`lag reveal → receiver under ${fmt(NOTES / revealSeconds)} reveals/s: p50 ${fmt(p50)} ms, p99 ${fmt(p99)} ms (goal p99 < 1000 ms); load ${loadAverage()}; notes answered 503 ${unavailableAnswers} times (repeated)`);
    await notes.stop();
    notes = undefined;

    // (2) deliveries per second to one receiver, events published straight to the broker
    const eventSealer = new ConsumerSealer(publicRingOf(ring), WEBHOOK_SEAL_PURPOSE);
    const target = new ConsumerSealer(publicRingOf(ring), WEBHOOK_TARGET_SEAL_PURPOSE).seal(JSON.stringify({ url: receiver.url, secret: `whsec_${randomBytes(24).toString('base64')}` }));
    const before = receiver.arrivals.size;
    const messages = Array.from({ length: EVENTS }, () => {
      const id = randomUUID();
      const noteRef = randomBytes(16).toString('hex');
      const timestamp = new Date().toISOString();
      const webhook = eventSealer.seal(JSON.stringify({ note_id: randomUUID(), access_details: { ip_address: '203.0.113.1', user_agent: 'bench', access_time: timestamp }, target }));
      return { id, routingKey: 'note.accessed', body: JSON.stringify({ id, event: 'note.accessed', version: 1, timestamp, data: { note_id: noteRef, note_ref: noteRef }, webhook }) };
    });
    const sendStarted = performance.now();
    bus = await RabbitMqBus.connect({ url: AMQP_URL, exchange, logger: silentLogger });
    for (let i = 0; i < messages.length; i += 200) await bus.publish(messages.slice(i, i + 200));
    const until = Date.now() + 300_000;
    while (receiver.arrivals.size - before < EVENTS && Date.now() < until) await sleep(20);
    const seconds = (performance.now() - sendStarted) / 1000;
    const delivered = receiver.arrivals.size - before;
    if (delivered < EVENTS) throw new Error(`only ${delivered} of ${EVENTS} deliveries arrived`);
    log(`deliveries to one receiver (RabbitMQ → webhooks process, MariaDB records → HTTP): ${fmt(EVENTS / seconds)} per second; load ${loadAverage()}`);
    process.stdout.write([
      '| measure | value |', '|---|---|',
      `| webhook lag, reveal → receiver, p50 (${NOTES} reveals, ${RATE > 0 ? `${RATE} per second, ` : ''}${CONCURRENCY} at a time at most; ${fmt(NOTES / revealSeconds)} reveals/s reached) | ${fmt(p50)} ms |`,
      `| webhook lag, reveal → receiver, p99 (goal < 1000 ms) | ${fmt(p99)} ms |`,
      `| deliveries per second to one receiver (${EVENTS} events) | ${fmt(EVENTS / seconds)} |`, '',
    ].join('\n'));
    await channel.deleteQueue(tap).catch(() => undefined);
    await admin.close();
    log(`webhooks service: ${attemptSummary(await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text())}; warnings: ${warningSummary(webhooks.logFile)}`);
  } finally {
    await notes?.stop().catch(() => undefined);
    await webhooks.stop();
    await bus?.close();
    await receiver.close();
    await root.query(`DROP DATABASE IF EXISTS \`${dbNotes}\``);
    await root.query(`DROP DATABASE IF EXISTS \`${dbHooks}\``);
    await root.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

let unavailableAnswers = 0;
/**
 * Repeats a notes call that answered 503 (its database did not answer in time: the shared MariaDB of a
 * loaded machine). A reveal's lag still counts from its first try, so a repeat only makes it look slower.
 */
async function untilAvailable<T>(call: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await call();
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 503) throw err;
      unavailableAnswers += 1;
      await sleep(100);
    }
  }
}

/** What the attempts came to (a tail of the lag is made of retries and deferrals): `result=count` pairs. */
function attemptSummary(metrics: string): string {
  const counts = [...metrics.matchAll(/^webhook_(delivery_attempts|deliveries)_total\{[^}]*(?:result|outcome)="([a-z_0-9]+)"[^}]*\} (\d+)/gm)]
    .filter((match) => match[3] !== '0')
    .map((match) => `${match[1] === 'deliveries' ? 'outcome' : 'attempt'} ${match[2]}=${match[3]}`);
  return counts.join(', ') || 'no attempts';
}

/** Warnings and errors the service logged during the run, counted by message. */
function warningSummary(logFile: string): string {
  const counts = new Map<string, number>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    let entry: { level?: string; msg?: string; err?: string };
    try { entry = JSON.parse(line) as typeof entry; } catch { continue; }
    if (entry.level !== 'warn' && entry.level !== 'error') continue;
    const key = `${entry.msg ?? '?'}${entry.err ? ` (${entry.err.slice(0, 60)})` : ''}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([message, count]) => `${count} × ${message}`).join('; ') || 'none';
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-webhooks failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});

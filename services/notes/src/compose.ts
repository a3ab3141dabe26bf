import { hkdfSync } from 'node:crypto';
import type { Server } from 'node:http';
import express from 'express';
import type { Knex } from 'knex';
import {
  ConsumerSealer, Lifecycle, Outages, dependencyFailureCounter, MAIL_SEAL_PURPOSE, MessageSealer, aeadOpen, aeadSeal, createAdminApp, createLogger,
  createRegistry, errorHandler, httpMetrics, inSequence, PUBLIC_LISTEN, ADMIN_LISTEN, listen, requestId, systemClock, type Clock, type Listening, type Logger,
  type MessageConsumer, type MessagePublisher, type OutboxStore, type Registry, type ResolveHost,
  WEBHOOK_SEAL_PURPOSE, WEBHOOK_TARGET_SEAL_PURPOSE, resolveAllAddresses,
} from '@vanish/common';
import { NoteWebhooks } from './domain/note-webhooks';
import { HeartbeatPublisher, OutboxRelay, RabbitMqBus } from '@vanish/bus';
import type { NotesConfig } from './config';
import { configureKnex, isDatabaseUnavailable } from './adapters/db/configure-knex';
import { KnexNoteStore } from './adapters/db/knex-note-store';
import { KnexOutboxStore } from './adapters/db/knex-outbox-store';
import { migrateToLatest } from './adapters/db/migrate';
import { ExpirySweeper } from './domain/expiry-sweeper';
import { NoteCrypto, type ScryptParams } from './domain/note-crypto';
import type { NoteEventsObserver } from './domain/note-events';
import { NoteService } from './domain/note-service';
import { ScryptLimit } from './domain/scrypt-limit';
import type { NotesApi } from './domain/notes';
import type { NoteStore } from './domain/ports';
import { accessLog } from './http/access-log';
import { createApiRoutes } from './http/api-routes';
import { FormTokens } from './http/form-tokens';
import { Translations } from './http/pages/i18n';
import { createPageRoutes } from './http/page-routes';
import { KnexUsedTokenStore } from './adapters/db/knex-used-token-store';
import { createNotesMetrics } from './notes-metrics';
import { KnexReceiptStore } from './adapters/db/knex-receipt-store';
import { ReceiptIds } from './receipts/receipt-ids';
import { ReceiptPurger } from './receipts/receipt-purger';
import { createReceiptApiRoutes, createReceiptPageRoutes } from './receipts/receipt-routes';
import { loadReleaseManifest } from './release/release-manifest';
import { createReleaseRoutes } from './release/release-routes';
import { ReceiptService } from './receipts/receipt-service';
import { ReceiptSigner } from './receipts/receipt-signer';
import { FileService } from './files/file-service';
import { FileSweeper } from './files/file-sweeper';
import { FileTokens } from './files/file-tokens';
import { bodyDeadline, createDownloadRoutes, createUploadRoutes } from './files/file-routes';
import { KnexFileRecords } from './files/knex-file-records';
import { openFileStorage } from './files/storage/open-file-storage';
import type { FileStorage } from './files/storage/ports';
import { KnexRequestStore } from './adapters/db/knex-request-store';
import { RequestCrypto } from './requests/request-crypto';
import { RequestIds } from './requests/request-ids';
import { createRequestMetrics } from './requests/request-metrics';
import { createRequestApiRoutes, createRequestPageRoutes } from './requests/request-routes';
import { RequestService } from './requests/request-service';

/** What the all-in-one process and tests may inject (the module contract of the team brief). */
export interface NotesServiceOverrides {
  /**
   * How long it keeps serving after it turned not-ready, before it stops listening (Lifecycle, default
   * 500 ms). The all-in-one gives 0: only its gateway is reached from outside, and it drains first.
   */
  drainDelayMs?: number;
  logger?: Logger;
  /** A shared in-process bus (all-in-one): the outbox is relayed to it and heartbeats go on it. */
  bus?: MessagePublisher & MessageConsumer;
  clock?: Clock;
  registry?: Registry;
  /** Passcode KDF cost; production parameters unless a test lowers them. */
  kdf?: ScryptParams;
  /** Backoff of the "database not reachable yet" migration retries. Default 500 ms doubling to 30 s. */
  migrationRetry?: { initialDelayMs?: number; maxDelayMs?: number };
  /**
   * Deadline of one note operation before it answers 503: the API's metadata read (default 5000 ms)
   * and each store operation (default 3000 ms; a creation only until its COMMIT is sent).
   */
  operationTimeoutMs?: number;
  /** How webhook hosts are resolved at registration (tests give a fixed answer). */
  resolveHost?: ResolveHost;
  /** DECISIONS 14: the file storage (tests give a folder or a bucket); default: what the configuration names. */
  fileStorage?: FileStorage;
}

export interface NotesService {
  start(): Promise<{ port: number; adminPort: number }>;
  /** Graceful: not ready, stop taking requests, finish those in flight, stop workers, close the pool. */
  stop(): Promise<void>;
  readonly notes: NotesApi;
  readonly app: express.Express;
  readonly registry: Registry;
  readonly lifecycle: Lifecycle;
  readonly knex: Knex;
  readonly store: NoteStore;
  readonly outbox: OutboxStore;
  /** The creators' side of notes (DECISIONS 12). */
  readonly receipts: ReceiptService;
  /** DECISIONS 14: files of notes, and the sweep that deletes what no live note needs. */
  readonly files: FileService;
  readonly fileSweeper: FileSweeper;
  /** Requests: drop boxes sealed end to end (DECISIONS 15). */
  readonly requests: RequestService;
  /** True once migrations have run against a reachable database. */
  isMigrated(): boolean;
  /** Resolves when migrations have completed (tests of a late database). */
  whenMigrated(): Promise<void>;
}

const DEFAULT_RETRY = { initialDelayMs: 500, maxDelayMs: 30_000 };

/**
 * The composition root of the notes service (STYLE H2): picks adapters from the validated config,
 * wires them by constructor, and owns start and stop. Nothing here runs until start().
 */
export async function createNotesService(config: NotesConfig, overrides: NotesServiceOverrides = {}): Promise<NotesService> {
  const logger = overrides.logger ?? createLogger('notes', config.logLevel);
  for (const warning of config.warnings) logger.warn(warning);
  const clock = overrides.clock ?? systemClock;
  const registry = overrides.registry ?? createRegistry('notes');
  const lifecycle = new Lifecycle(logger, overrides.drainDelayMs);
  const metrics = createNotesMetrics(registry);

  // A database outage is one event in the log: requests that fail for it report here (the error
  // handlers, the driver's failed connections), any query that answers ends it.
  const outages = new Outages({ logger: logger.child('notes/db'), onFailure: dependencyFailureCounter(registry, 'notes') });
  const database = outages.of('database');
  const knex = configureKnex(config.databaseUrl, { logger: logger.child('notes/db'), sslCa: config.databaseSslCa, outage: database });
  const store = new KnexNoteStore(knex, clock, { operationTimeoutMs: overrides.operationTimeoutMs });
  // The relay gets a small pool of its own: under a create burst it would otherwise queue behind
  // requests for connections, and events would lag by seconds (docs/events.md).
  const relayKnex = configureKnex(config.databaseUrl, { poolMax: 2, logger: logger.child('notes/db-relay'), sslCa: config.databaseSslCa, outage: database });
  const outbox = new KnexOutboxStore(relayKnex, clock);
  for (const client of [knex, relayKnex]) client.on('query-response', () => database.answered());
  const reportedAsOutage = (task: string) => (err: unknown): boolean => {
    const state = outages.forError(err) ?? (isDatabaseUnavailable(err) ? database : undefined);
    state?.failed({ task, err });
    return state !== undefined;
  };
  const scryptLimit = new ScryptLimit(config.scryptLimit);
  metrics.watchScryptLimit(scryptLimit);
  const crypto = new NoteCrypto({ masterKeys: config.masterKeys, lookupKey: config.lookupKey, kdf: overrides.kdf, scryptLimit });

  let relay: OutboxRelay | undefined;
  let fileSweeper: FileSweeper | undefined;
  const events: NoteEventsObserver = {
    noteEvent(event, data) {
      metrics.observer.noteEvent(event, data);
      relay?.notify(); // the rows just committed: publish now rather than at the next poll
      // DECISIONS 14: a note just ended: its bytes go now (or once its download window has passed).
      if (event === 'note.destroyed' || event === 'note.expired') fileSweeper?.reapSoon();
    },
  };
  const receiptIds = new ReceiptIds(config.lookupKey);
  const receiptStore = new KnexReceiptStore(knex);
  const receiptSigner = new ReceiptSigner(config.receiptSigningKeys);
  const webhooks = config.webhookPublicKeys && new NoteWebhooks({
    eventSealer: new ConsumerSealer(config.webhookPublicKeys, WEBHOOK_SEAL_PURPOSE),
    targetSealer: new ConsumerSealer(config.webhookPublicKeys, WEBHOOK_TARGET_SEAL_PURPOSE),
    requireHttps: config.production,
    allowPrivateNetworks: config.webhookAllowPrivateNetworks,
    resolveHost: overrides.resolveHost ?? resolveAllAddresses,
  });
  if (!webhooks) logger.warn('WEBHOOK_PUBLIC_KEYS is not set: webhooks are off and a webhook_url is refused (DECISIONS 11)');
  // DECISIONS 17: the manifest the build wrote; its digest goes into each reveal's receipt row.
  const release = loadReleaseManifest();
  const fileStorage = overrides.fileStorage ?? await openFileStorage(config.fileStorage);
  const fileRecords = new KnexFileRecords(knex, { operationTimeoutMs: overrides.operationTimeoutMs });
  const files = new FileService({
    storage: fileStorage, records: fileRecords, tokens: new FileTokens(config.lookupKey), clock, limits: config.files,
    publicBaseUrl: config.publicBaseUrl, logger: logger.child('notes/files'), observer: metrics.files.observer,
  });
  fileSweeper = new FileSweeper({
    storage: fileStorage, records: fileRecords, notes: store, clock, uploadWindowHours: config.files.uploadWindowHours,
    logger: logger.child('notes/file-sweeper'), events, webhooks: webhooks || undefined, metrics: metrics.files,
  });
  const sweepFiles = fileSweeper;
  const notes = new NoteService({
    releaseDigest: release.digest,
    store,
    crypto,
    mailSealer: config.mailSealing.kind === 'to-mailer'
      ? new ConsumerSealer(config.mailSealing.publicKeys, MAIL_SEAL_PURPOSE)
      : new MessageSealer(config.mailSealing.keys, MAIL_SEAL_PURPOSE),
    clock,
    publicBaseUrl: config.publicBaseUrl,
    retentionHours: config.noteRetentionHours,
    logger: logger.child('notes/note-service'),
    events,
    receiptIds,
    webhooks,
    files,
  });
  const sweeper = new ExpirySweeper({ store, clock, intervalMs: config.sweepIntervalMs, logger: logger.child('notes/expiry-sweeper'), events, webhooks,
    reportedAsOutage: reportedAsOutage('expiry sweep'),
    // DECISIONS 14: abandoned uploads, the bytes of ended notes, and orphans, in the same schedule.
    afterSweep: () => sweepFiles.sweepOnce().catch((err: unknown) => {
      if (reportedAsOutage('file sweep')(err)) return;
      logger.warn('file sweep failed; will retry', { err: (err as Error).message });
    }),
  });
  const receipts = new ReceiptService({
    store, receipts: receiptStore, ids: receiptIds, noteCrypto: crypto, signer: receiptSigner, clock,
    publicBaseUrl: config.publicBaseUrl, retentionHours: config.noteRetentionHours, logger: logger.child('notes/receipts'), events,
    webhooks: webhooks || undefined,
  });
  const requestStore = new KnexRequestStore(knex, clock, { operationTimeoutMs: overrides.operationTimeoutMs });
  const requests = new RequestService({
    store: requestStore,
    ids: new RequestIds(config.lookupKey),
    crypto: new RequestCrypto(config.masterKeys),
    notes,
    files,
    noteLookup: (uuid) => crypto.lookup(uuid),
    mailSealer: config.mailSealing.kind === 'to-mailer'
      ? new ConsumerSealer(config.mailSealing.publicKeys, MAIL_SEAL_PURPOSE)
      : new MessageSealer(config.mailSealing.keys, MAIL_SEAL_PURPOSE),
    webhooks: webhooks || undefined,
    webhookEventSealer: config.webhookPublicKeys ? new ConsumerSealer(config.webhookPublicKeys, WEBHOOK_SEAL_PURPOSE) : undefined,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    logger: logger.child('notes/requests'),
    metrics: createRequestMetrics(registry),
  });
  // A request is kept while a submission's note lives, and a retention after its date or closing (DECISIONS 15).
  const requestPurger = new ReceiptPurger({
    receipts: requestStore, what: 'ended requests', clock, retentionHours: config.noteRetentionHours, intervalMs: config.sweepIntervalMs,
    logger: logger.child('notes/request-purger'), reportedAsOutage: reportedAsOutage('request purge'),
  });
  const receiptPurger = new ReceiptPurger({
    receipts: receiptStore, clock, retentionHours: config.noteRetentionHours, intervalMs: config.sweepIntervalMs, logger: logger.child('notes/receipt-purger'),
    reportedAsOutage: reportedAsOutage('receipt purge'),
  });

  // Migrations run under knex's lock once the database answers; until then note operations
  // answer 503 and /readyz is red, and the service keeps trying without a restart.
  let migrated = false;
  let resolveMigrated!: () => void;
  const migratedPromise = new Promise<void>((resolve) => { resolveMigrated = resolve; });
  const databaseReady = async () => {
    const up = migrated && (await store.ping());
    metrics.databaseUp.set(up ? 1 : 0);
    return up;
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false); // answers are never cached (no-store); an ETag would only invite an undocumented 304
  app.set('case sensitive routing', true); // as the gateway routes: `/API/...` is no API path, on either port
  // One express layer for what every request passes (docs/performance.md: each layer costs the router's matching).
  app.use(inSequence([requestId, httpMetrics(registry, 'notes'), accessLog(logger.child('notes/access')), bodyDeadline()]));
  // Mount order (DECISIONS 9 / team brief): the API first, then the web pages; the receipts'
  // routes go before each, whose catch-alls would answer 404 first. The receipt pages' router
  // (`/r/:id`, the keys document) comes after the API, so that API requests never walk it.
  const formTokens = new FormTokens(formTokenKey(config.lookupKey), new KnexUsedTokenStore(knex, clock), clock);
  const translations = new Translations();
  const receiptRoutes = {
    receipts, signer: receiptSigner, formTokens, publicBaseUrl: config.publicBaseUrl, logger: logger.child('notes/receipts'), outages, isAvailable: () => migrated, translations,
  };
  app.use('/api/receipt', createReceiptApiRoutes(receiptRoutes));
  const requestRoutes = {
    requests, publicBaseUrl: config.publicBaseUrl, logger, outages, isAvailable: () => migrated, translations, production: config.production,
  };
  app.use('/api', createRequestApiRoutes(requestRoutes));
  app.use('/api', createApiRoutes({ notes, logger, outages, isAvailable: () => migrated, operationTimeoutMs: overrides.operationTimeoutMs }));
  app.use(createReleaseRoutes(release.text));
  // DECISIONS 14: uploads (tus) and downloads, before the pages' catch-all.
  const fileRoutes = { files, logger, outages, isAvailable: () => migrated };
  app.use('/files/uploads', createUploadRoutes(fileRoutes));
  app.use('/files/d', createDownloadRoutes(fileRoutes));
  app.use(createReceiptPageRoutes(receiptRoutes));
  app.use(createRequestPageRoutes(requestRoutes));
  app.use(createPageRoutes({
    notes,
    formTokens,
    publicBaseUrl: config.publicBaseUrl,
    logger: logger.child('notes/pages'),
    outages,
    receipts,
    expiryPresets: config.expiryPresets,
    retentionHours: config.noteRetentionHours,
    translations,
  }));
  // The pages answer every path the API does not (their own 404 page included).
  app.use(errorHandler(logger.child('notes/http'), outages));

  const adminApp = createAdminApp({
    registry,
    isDraining: () => lifecycle.isDraining,
    checks: [{ name: 'database', check: databaseReady }],
    logger: logger.child('notes/admin'),
  });

  let stopping = false;
  let wakeRetry: (() => void) | undefined;
  let workers: Promise<void> | undefined;
  let firstAttemptDone!: () => void;
  const firstAttempt = new Promise<void>((resolve) => { firstAttemptDone = resolve; });
  const migrateLoop = async (): Promise<void> => {
    const retry = { ...DEFAULT_RETRY, ...overrides.migrationRetry };
    let delay = retry.initialDelayMs;
    for (let attempt = 1; !stopping; attempt += 1) {
      try {
        const applied = await migrateToLatest(knex);
        migrated = true;
        metrics.databaseUp.set(1);
        logger.info('database ready', { migrationsApplied: applied.length, attempts: attempt });
        resolveMigrated();
        if (!stopping) {
          workers = startWorkers().catch((err) => {
            logger.error('background workers failed to start', { err: (err as Error).message });
          });
        }
        return;
      } catch (err) {
        const unreachable = isDatabaseUnavailable(err);
        const message = `${unreachable ? 'database not reachable' : 'database migration failed'}; retrying in ${Math.round(delay / 100) / 10} s (note operations answer 503 meanwhile)`;
        const fields = { attempt, retryInMs: delay, err: (err as Error).message };
        if (unreachable) logger.warn(message, fields);
        else logger.error(message, fields);
      } finally {
        firstAttemptDone();
      }
      if (stopping) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wakeRetry = () => { clearTimeout(timer); resolve(); };
      });
      delay = Math.min(delay * 2, retry.maxDelayMs);
    }
  };

  let bus: (MessagePublisher & MessageConsumer) | undefined = overrides.bus;
  let heartbeat: HeartbeatPublisher | undefined;
  const startWorkers = async () => {
    sweeper.start();
    receiptPurger.start();
    requestPurger.start();
    if (!bus && config.amqpUrl) {
      const rabbit = await RabbitMqBus.connect({
        url: config.amqpUrl,
        tls: config.amqpTls,
        exchange: config.amqpExchange,
        logger,
        registry,
        connectionName: `vanish-notes-${process.pid}`,
        connectLazily: true,
        // The broker's outage is one event in the log, and its failures count in notes_dependency_failures_total.
        outage: outages.of('rabbitmq', { logger: logger.child('notes/bus'), counting: 'reconnect attempts failed' }),
        // Note events of one relay round travel in packs (docs/events.md); their one consumer, stats,
        // runs this bus. Mail commands go one by one.
        packRoutingKeys: (routingKey) => routingKey.startsWith('note.'),
      });
      lifecycle.add('rabbitmq', () => rabbit.close());
      bus = rabbit;
    }
    if (!bus) {
      logger.warn('AMQP_URL is not set: events and mail commands stay in the outbox and nothing is relayed (DECISIONS 10); set AMQP_URL to deliver them');
      return;
    }
    relay = new OutboxRelay({ store: outbox, publisher: bus, logger, registry });
    relay.start();
    lifecycle.add('outbox-relay', () => relay?.stop());
    heartbeat = new HeartbeatPublisher({
      publisher: bus,
      service: 'notes',
      intervalMs: config.heartbeatIntervalMs,
      logger,
      probe: async () => ({
        database: (await databaseReady()) ? 'healthy' : 'unhealthy',
        encryption: encryptionAvailable(config) ? 'available' : 'unavailable',
      }),
    });
    heartbeat.start();
    lifecycle.add('heartbeat', () => heartbeat?.stop());
  };

  let started: Promise<{ port: number; adminPort: number }> | undefined;
  const start = async () => {
    const admin = await listen(adminApp, config.adminPort, config.host, undefined, ADMIN_LISTEN);
    lifecycle.add('admin-server', () => admin.close());
    lifecycle.add('database', async () => { await relayKnex.destroy(); await knex.destroy(); });
    lifecycle.add('file-storage', () => fileStorage.close());
    const loop = migrateLoop();
    lifecycle.add('migrations-and-sweeper', async () => {
      stopping = true;
      wakeRetry?.();
      await loop;
      await workers;
      await sweeper.stop();
      await receiptPurger.stop();
      await sweepFiles.settled();
      await requestPurger.stop();
    });
    // A reachable database is migrated before start() resolves; an unreachable one is retried
    // in the background while the service already answers (503 for note operations).
    await firstAttempt;
    const http: Listening = await listen(app, config.port, config.host, undefined, PUBLIC_LISTEN);
    // DECISIONS 14: no whole-request deadline (an upload takes as long as it moves); bodyDeadline keeps the
    // listener's 30 s for every other body, uploads get an idle timeout (file-routes.ts).
    http.server.requestTimeout = 0;
    lifecycle.add('http-server', () => closeGracefully(http, config.shutdownGraceMs));
    logger.info('notes service listening', { port: http.port, adminPort: admin.port, databaseReady: migrated });
    return { port: http.port, adminPort: admin.port };
  };

  return {
    start: () => (started ??= start()),
    stop: async () => {
      stopping = true;
      wakeRetry?.();
      if (!started) {
        await relayKnex.destroy();
        await knex.destroy();
        await fileStorage.close();
        return;
      }
      await started.catch(() => undefined);
      await lifecycle.stop();
    },
    notes,
    app,
    registry,
    lifecycle,
    knex,
    store,
    outbox,
    receipts,
    files,
    fileSweeper: sweepFiles,
    requests,
    isMigrated: () => migrated,
    whenMigrated: () => migratedPromise,
  };
}

/** The form-token key is derived from the lookup key (never rotated), for its own purpose only. */
function formTokenKey(lookupKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', lookupKey, Buffer.alloc(0), 'vanish form tokens v1', 32));
}

/** The master key seals and opens: what `encryption: available` promises in heartbeats. */
function encryptionAvailable(config: NotesConfig): boolean {
  try {
    const key = config.masterKeys.current.material;
    return aeadOpen(key, aeadSeal(key, Buffer.from('probe'))).toString() === 'probe';
  } catch {
    return false;
  }
}

/** Stops accepting, lets requests in flight finish, and cuts whatever is left at the deadline. */
async function closeGracefully(listening: Listening, graceMs: number): Promise<void> {
  const server: Server = listening.server;
  const deadline = setTimeout(() => server.closeAllConnections(), Math.max(100, graceMs - 500));
  deadline.unref();
  await listening.close();
  clearTimeout(deadline);
}

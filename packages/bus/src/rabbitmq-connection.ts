import { randomBytes } from 'node:crypto';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import { DependencyState, type Logger } from '@vanish/common';
import type { BusMetrics } from './bus-metrics';
import { amqpSocketOptions, type AmqpTlsSettings } from './amqp-tls';
import { coalesceFrameWrites } from './frame-write-coalescing';
import { declareExchanges } from './rabbitmq-topology';

export interface BrokerAddress {
  /** amqp://user:pass@host:port/vhost, or amqps:// (TLS, see `tls`); or several, comma-separated. */
  url: string;
  /** The nodes of one cluster, when given apart from `url`. */
  urls?: readonly string[];
  /** For amqps://: the CA to verify the broker with (amqp-tls.ts). */
  tls?: AmqpTlsSettings;
  /** Shown by `rabbitmqctl list_connections name client_properties` (connection_name). */
  connectionName: string;
  /** AMQP heartbeat in seconds (detects a dead peer behind a silent network). Default 5. */
  heartbeatSeconds?: number;
}

/** The broker addresses to try, in order: `urls`, else `url` split at commas. */
export function brokerUrls(address: Pick<BrokerAddress, 'url' | 'urls'>): string[] {
  const urls = (address.urls && address.urls.length > 0 ? address.urls : address.url.split(','))
    .map((url) => url.trim()).filter((url) => url !== '');
  if (urls.length === 0) throw new Error('no RabbitMQ address given');
  return urls;
}

/**
 * Connects to the first node that answers, trying each address once starting at `startAt` (amqplib
 * knows one URL only). Rejects with the last failure when none answers.
 */
export async function connectToAnyBroker(address: BrokerAddress, startAt = 0): Promise<{ model: ChannelModel; index: number; url: string }> {
  const urls = brokerUrls(address);
  let failure: unknown;
  for (let i = 0; i < urls.length; i++) {
    const index = (startAt + i) % urls.length;
    try {
      return { model: await connectToBroker({ ...address, url: urls[index]!, urls: undefined }), index, url: urls[index]! };
    } catch (err) {
      failure = err;
    }
  }
  throw failure;
}

/**
 * The one place that opens an AMQP connection: every option of amqplib's connect belongs here. amqplib is
 * loaded on the first connection (the all-in-one, on its in-process bus, never loads it).
 */
export async function connectToBroker(address: BrokerAddress): Promise<ChannelModel> {
  const url = new URL(brokerUrls(address)[0]!);
  if (!url.searchParams.has('heartbeat')) url.searchParams.set('heartbeat', String(address.heartbeatSeconds ?? 5));
  const { connect } = await import('amqplib');
  return connect(url.toString(), {
    ...amqpSocketOptions(address.url, address.tls),
    clientProperties: { connection_name: address.connectionName },
    timeout: 5_000,
  });
}

/** host:port of an AMQP URL, for logs (never its credentials). */
export function brokerHost(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'amqps:' ? '5671' : '5672')}`;
  } catch {
    return 'unparsable';
  }
}

export const newConnectionName = (): string => `vanish-${process.pid}-${randomBytes(4).toString('hex')}`;

/** A live connection and what the bus keeps per connection. */
export interface Connected {
  model: ChannelModel;
  publishChannel: ConfirmChannel;
  retryQueues: Set<string>;
  /** Ids of mandatory messages the broker returned as unroutable. */
  returned: Set<string>;
}

export interface RabbitMqConnectionOptions extends BrokerAddress {
  exchange: string;
  logger: Logger;
  metrics: BusMetrics;
  /** Reconnect backoff: doubles from initial to max, with jitter. Default 200 → 10000 ms. */
  reconnectInitialDelayMs?: number;
  reconnectMaxDelayMs?: number;
  /** Called on each new connection before it counts as connected (subscriptions attach here). */
  onOpen(model: ChannelModel): Promise<void>;
  /** Called when the connection is lost (its deliveries come again on the next one). */
  onLost(): void;
  /** For the connected log line. */
  subscriptionCount(): number;
  /**
   * The service's state of its broker (common's DependencyState, `rabbitmq`), so the failures count in
   * its `<svc>_dependency_failures_total`; by default one of the bus's own.
   */
  outage?: DependencyState;
}

/**
 * Connection management: opens the connection and its confirm channel for publishing, declares the
 * exchanges, listens for errors everywhere, and reconnects with backoff whenever the connection is lost.
 */
export class RabbitMqConnection {
  private current: Connected | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempt = 0;
  private opening: Promise<void> | undefined;
  private closed = false;
  private everConnected = false;
  /** The address to try first next time: after a loss, the node after the one that was lost. */
  private nextAddress = 0;

  /**
   * The broker's outage as one event in the log (issue 37). A lost connection is one warn line; one
   * that comes back at the first attempt (another node of a cluster took over) is one info line
   * after it. A reconnect that fails makes it an outage: one error line (publishes wait in the
   * outbox, deliveries stop until it is back), the failed attempts summed up at most every 5 s, one
   * info line when it is back; each attempt at debug, and the `reconnected` line too (the state's
   * info line says it, with the outage's length).
   */
  private readonly brokerState: DependencyState;
  /** The last error the connection reported before it closed (amqplib emits `error`, then `close`). */
  private lastError: Error | undefined;

  constructor(private readonly options: RabbitMqConnectionOptions) {
    this.brokerState = options.outage ?? new DependencyState({
      dependency: 'rabbitmq', logger: options.logger, counting: 'reconnect attempts failed',
    });
  }

  /** True from the loss of the connection until it is back (the broker's outage). */
  get isDown(): boolean {
    return this.brokerState.isDown;
  }

  /** The live connection, if any. */
  get connected(): Connected | undefined {
    return this.current;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Connects now (rejects when the broker is down), or, lazily, in the background until it can. */
  async start(lazily: boolean): Promise<void> {
    if (lazily) this.scheduleReconnect(0);
    else await this.open();
  }

  /** Resolves true once connected (and every subscription attached), false after timeoutMs. */
  async waitUntilConnected(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.current && !this.closed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await this.opening?.catch(() => undefined);
    return this.current !== undefined;
  }

  /** Stops reconnecting; `beforeClose` runs first (subscriptions cancel), then the connection closes. */
  async close(beforeClose: () => Promise<void>): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await beforeClose();
    await this.opening?.catch(() => undefined);
    const connected = this.current;
    this.current = undefined;
    if (connected) {
      await connected.publishChannel.close().catch(() => undefined);
      await connected.model.close().catch(() => undefined);
    }
    this.options.metrics.connected(false);
  }

  private open(): Promise<void> {
    this.opening ??= this.doOpen().finally(() => { this.opening = undefined; });
    return this.opening;
  }

  private async doOpen(): Promise<void> {
    const { logger, exchange } = this.options;
    const { model, index, url } = await connectToAnyBroker(this.options, this.nextAddress);
    this.nextAddress = index;
    if (!coalesceFrameWrites(model)) logger.debug('amqplib internals changed: frames are written one by one');
    // Told once as part of the outage (onConnectionLost); the connection closes right after.
    model.on('error', (err: Error) => {
      this.lastError = err;
      logger.debug('RabbitMQ connection error', { err: err.message });
    });
    model.on('close', () => {
      if (this.current?.model === model) this.nextAddress = index + 1;
      this.onConnectionLost(model);
    });
    try {
      const { publishChannel, returned } = await this.openPublishChannel(model);
      if (this.closed) throw new Error('closed while connecting');
      this.current = { model, publishChannel, retryQueues: new Set(), returned };
      await this.options.onOpen(model);
    } catch (err) {
      this.current = undefined;
      await model.close().catch(() => undefined);
      throw err;
    }
    this.options.metrics.connected(true);
    if (this.everConnected) this.options.metrics.reconnected();
    const fields = { exchange, connection: this.options.connectionName, broker: brokerHost(url), subscriptions: this.options.subscriptionCount() };
    if (!this.everConnected) logger.info('connected to RabbitMQ', fields);
    else if (this.brokerState.isDown) logger.debug('reconnected to RabbitMQ', fields);
    else logger.info('reconnected to RabbitMQ', fields);
    this.brokerState.answered();
    this.everConnected = true;
    this.reconnectAttempt = 0;
  }

  /**
   * A confirm channel whose publishes were refused (a quorum queue without a leader for a moment)
   * was seen to keep refusing after the new leader was elected; a fresh channel did not. Called after
   * a nack: the next publish goes on a new channel of the same connection.
   */
  async renewPublishChannel(stale: ConfirmChannel): Promise<void> {
    const current = this.current;
    if (!current || current.publishChannel !== stale || this.closed) return;
    const { publishChannel, returned } = await this.openPublishChannel(current.model);
    if (this.current !== current || current.publishChannel !== stale) {
      await publishChannel.close().catch(() => undefined);
      return;
    }
    this.current = { ...current, publishChannel, returned };
    await stale.close().catch(() => undefined);
  }

  private async openPublishChannel(model: ChannelModel): Promise<{ publishChannel: ConfirmChannel; returned: Set<string> }> {
    const { logger, exchange } = this.options;
    const publishChannel = await model.createConfirmChannel();
    publishChannel.on('error', (err: Error) => logger.warn('RabbitMQ publish channel error', { err: err.message }));
    publishChannel.on('close', () => {
      // A channel-level error (never expected) closes only the channel: start afresh.
      if (this.current?.publishChannel === publishChannel && !this.closed) void model.close().catch(() => undefined);
    });
    await declareExchanges(publishChannel, exchange);
    const returned = new Set<string>();
    // The broker sends basic.return before the confirm of an unroutable mandatory message.
    publishChannel.on('return', (message: { properties: { messageId?: unknown } }) => {
      if (typeof message.properties.messageId === 'string') returned.add(message.properties.messageId);
    });
    return { publishChannel, returned };
  }

  private onConnectionLost(model: ChannelModel): void {
    if (this.current?.model !== model) return;
    this.current = undefined;
    this.options.metrics.connected(false);
    this.options.onLost();
    if (this.closed) return;
    const err = this.lastError;
    this.lastError = undefined;
    this.options.logger.warn('lost the RabbitMQ connection; reconnecting', { connection: this.options.connectionName, ...(err ? { err: err.message } : {}) });
    this.scheduleReconnect();
  }

  private scheduleReconnect(delayOverrideMs?: number): void {
    if (this.closed || this.reconnectTimer) return;
    const initial = this.options.reconnectInitialDelayMs ?? 200;
    const max = this.options.reconnectMaxDelayMs ?? 10_000;
    const base = Math.min(max, initial * 2 ** this.reconnectAttempt);
    const delay = delayOverrideMs ?? Math.round(base / 2 + Math.random() * (base / 2));
    this.reconnectAttempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.open().catch((err: Error) => {
        // A broker that was never reached at start is an outage too (a lazily connecting service).
        this.brokerState.failed({ connection: this.options.connectionName, task: 'reconnect', err, attempt: this.reconnectAttempt });
        this.scheduleReconnect();
      });
    }, delay);
  }
}

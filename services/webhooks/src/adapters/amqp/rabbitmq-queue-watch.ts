import type { Channel, ChannelModel, GetMessage } from 'amqplib';
import { connectToAnyBroker, type AmqpTlsSettings } from '@vanish/bus';

/** Bounds one sweep: the messages kept are held unacknowledged until the sweep ends. */
const MAX_PER_SWEEP = 10_000;

export interface QueueWatch {
  /** Messages waiting in the main queue and in its dead-letter queue (0 for a queue not declared yet). */
  depths(): Promise<{ main: number; deadLetter: number }>;
  /** Drops dead-lettered events created before `cutoff`; their bodies hold sealed uuids (DECISIONS 1). */
  dropDeadLettersOlderThan(cutoff: Date): Promise<{ dropped: number; kept: number }>;
}

/**
 * Looks at `<queue>` and `<queue>.dlq` over a short-lived connection of its own (as the mailer's
 * dead-letter sweeper does): depths for the metrics and the alert, and the retention of dead
 * letters. A body is parsed for its `timestamp` only and never logged.
 */
export class RabbitMqQueueWatch implements QueueWatch {
  constructor(private readonly options: { url: string; tls?: AmqpTlsSettings; queue: string; connectionName?: string }) {}

  async depths(): Promise<{ main: number; deadLetter: number }> {
    return this.withChannel(async (channel) => ({
      main: await count(channel, this.options.queue),
      deadLetter: await count(channel, `${this.options.queue}.dlq`),
    }));
  }

  async dropDeadLettersOlderThan(cutoff: Date): Promise<{ dropped: number; kept: number }> {
    return this.withChannel(async (channel) => {
      let dropped = 0;
      let kept = 0;
      const dlq = `${this.options.queue}.dlq`;
      if ((await count(channel, dlq)) === 0) return { dropped, kept };
      for (let i = 0; i < MAX_PER_SWEEP; i++) {
        const message = await channel.get(dlq, { noAck: false });
        if (!message) break;
        if (createdBefore(message, cutoff)) {
          channel.ack(message);
          dropped += 1;
        } else {
          kept += 1;
        }
      }
      return { dropped, kept };
    });
  }

  private async withChannel<T>(work: (channel: Channel) => Promise<T>): Promise<T> {
    // Any live node of the cluster will do (the url may list several), over TLS when amqps://.
    const { model: connection }: { model: ChannelModel } = await connectToAnyBroker({
      url: this.options.url, tls: this.options.tls, connectionName: this.options.connectionName ?? 'webhooks queue watch',
    });
    connection.on('error', () => undefined);
    try {
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      const result = await work(channel);
      await channel.close().catch(() => undefined); // unacknowledged (kept) messages go back in order
      return result;
    } finally {
      await connection.close().catch(() => undefined);
    }
  }
}

/** Throws (and the broker closes the channel) when the queue is not declared yet. */
async function count(channel: Channel, queue: string): Promise<number> {
  return (await channel.checkQueue(queue)).messageCount;
}

function createdBefore(message: GetMessage, cutoff: Date): boolean {
  try {
    const timestamp = (JSON.parse(message.content.toString('utf8')) as { timestamp?: unknown }).timestamp;
    const created = typeof timestamp === 'string' ? Date.parse(timestamp) : Number.NaN;
    return Number.isNaN(created) || created < cutoff.getTime();
  } catch {
    return true;
  }
}

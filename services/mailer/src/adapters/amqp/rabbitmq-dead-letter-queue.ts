import type { Channel, ChannelModel, GetMessage } from 'amqplib';
import { connectToAnyBroker, type AmqpTlsSettings } from '@vanish/bus';
import type { DeadLetterQueue } from '../../jobs/dead-letter-sweeper';

/** Bounds one sweep: the messages kept are held unacknowledged until the sweep ends. */
const MAX_PER_SWEEP = 10_000;

/**
 * Sweeps `<queue>.dlq` over a short-lived connection of its own: takes each message (basic.get),
 * acknowledges (drops) those created before the cutoff, and, by closing the channel, hands the kept
 * ones back to the broker, which requeues them in their order. A command's age is its envelope's
 * `timestamp` (when notes created it); the body is parsed for that only and never logged.
 */
export class RabbitMqDeadLetterQueue implements DeadLetterQueue {
  constructor(private readonly options: { url: string; tls?: AmqpTlsSettings; queue: string; connectionName?: string }) {}

  async dropOlderThan(cutoff: Date): Promise<{ dropped: number; kept: number }> {
    // Any live node of the cluster will do (the url may list several), over TLS when amqps://.
    const { model: connection }: { model: ChannelModel } = await connectToAnyBroker({
      url: this.options.url, tls: this.options.tls, connectionName: this.options.connectionName ?? 'mailer dead-letter sweeper',
    });
    connection.on('error', () => undefined);
    let dropped = 0;
    let kept = 0;
    try {
      const channel: Channel = await connection.createChannel();
      channel.on('error', () => undefined);
      try {
        await channel.checkQueue(this.options.queue);
      } catch {
        return { dropped, kept }; // not declared yet: nothing was ever dead-lettered
      }
      for (let i = 0; i < MAX_PER_SWEEP; i++) {
        const message = await channel.get(this.options.queue, { noAck: false });
        if (!message) break;
        if (createdBefore(message, cutoff)) {
          channel.ack(message);
          dropped += 1;
        } else {
          kept += 1;
        }
      }
      await channel.close(); // the kept ones (unacknowledged) go back to the queue
    } finally {
      await connection.close().catch(() => undefined);
    }
    return { dropped, kept };
  }
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

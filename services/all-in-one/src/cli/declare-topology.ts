import { EnvReader } from '@vanish/common';
import { connectToAnyBroker, declareTopology, readAmqpTls, readAmqpUrl, readQueueSettings } from '@vanish/bus';
import { readWebhookRetryDelays } from '@vanish/webhooks';
import { vanishConsumerQueues } from '../topology';

/**
 * Declares vanish's whole RabbitMQ topology (exchanges, every consumer queue with its dead-letter
 * and retry queues, bindings) and exits: run at deploy time, before the services, with a broker user
 * allowed to configure all of it. Reads AMQP_URL(S), AMQP_TLS_CA(_FILE), AMQP_EXCHANGE,
 * AMQP_QUEUE_TYPE, AMQP_DELIVERY_LIMIT, AMQP_QUEUE_PREFIX (stats), MAIL_QUEUE, WEBHOOK_QUEUE and
 * WEBHOOK_RETRY_DELAYS_MS like the services.
 * Idempotent; a queue that exists with another type is reported (docs/scaling.md: the migration).
 */
export async function declareVanishTopology(env: NodeJS.ProcessEnv): Promise<{ queues: string[] }> {
  const reader = new EnvReader(env);
  const url = readAmqpUrl(reader);
  reader.requireInProduction('AMQP_URL', url, 'the topology is declared on RabbitMQ');
  const tls = readAmqpTls(reader, url);
  const exchange = reader.str('AMQP_EXCHANGE', 'vanish');
  const settings = readQueueSettings(reader);
  const consumers = vanishConsumerQueues({
    statsQueuePrefix: reader.str('AMQP_QUEUE_PREFIX', ''), mailQueue: reader.str('MAIL_QUEUE'), webhookQueue: reader.str('WEBHOOK_QUEUE'),
    webhookRetryDelaysMs: readWebhookRetryDelays(reader),
  });
  reader.done();
  if (url === undefined) throw new Error('AMQP_URL (or AMQP_URLS) is required');
  const { model } = await connectToAnyBroker({ url, tls, connectionName: 'vanish declare-topology' });
  try {
    await declareTopology(model, { exchange, consumers, settings });
  } finally {
    await model.close().catch(() => undefined);
  }
  return { queues: consumers.map((c) => c.queue) };
}

if (require.main === module) {
  declareVanishTopology(process.env).then(({ queues }) => {
    process.stdout.write(`${JSON.stringify({ level: 'info', msg: 'topology declared', queues })}\n`);
  }, (err: Error) => {
    process.stderr.write(`${JSON.stringify({ level: 'error', msg: 'declaring the topology failed', err: err.message })}\n`);
    process.exitCode = 1;
  });
}

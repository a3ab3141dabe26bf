import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import amqp from 'amqplib';

export const RABBITMQ_URL = 'amqp://guest:guest@127.0.0.1:5672';

const run = promisify(execFile);

async function listNames(what: 'queues' | 'exchanges'): Promise<string[]> {
  const { stdout } = await run('rabbitmqctl', [`list_${what}`, '-q', '--no-table-headers', 'name'], { timeout: 30_000 });
  return stdout.split('\n').map((line) => line.trim()).filter((line) => line !== '');
}

/**
 * Deletes the queues and exchanges whose names start with `prefix` (a test's own tag), so a test
 * that ran services on the shared broker leaves nothing durable behind. Never touches other names.
 * Lists with `rabbitmqctl` (the machine's; needs root), deletes over AMQP.
 */
export async function deleteRabbitObjects(prefix: string, url = RABBITMQ_URL): Promise<{ queues: string[]; exchanges: string[] }> {
  if (prefix.length < 6) throw new Error(`refusing a prefix this short: "${prefix}"`);
  const queues = (await listNames('queues')).filter((name) => name.startsWith(prefix));
  const exchanges = (await listNames('exchanges')).filter((name) => name.startsWith(prefix));
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    for (const queue of queues) await channel.deleteQueue(queue);
    for (const exchange of exchanges) await channel.deleteExchange(exchange);
    await channel.close();
  } finally {
    await connection.close();
  }
  return { queues, exchanges };
}

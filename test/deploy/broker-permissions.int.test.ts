// The broker permissions test: one RabbitMQ user per service, each limited to what it uses.
// It runs a RabbitMQ node of its own (Debian's rabbitmq-server, loopback ports, a temp dir, its own
// epmd), booted with the definitions file docker compose loads, and stops it at the end: the
// machine's broker, its users and vhosts are never touched.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp, { type Channel } from 'amqplib';
import { PermanentMessageFailure, RetryMessageLater, WEBHOOK_EVENT_NAMES, silentLogger, type IncomingMessage } from '@vanish/common';
import { RabbitMqBus, dlqName } from '@vanish/bus';
import { loadMailerConfig } from '@vanish/mailer';
import { HEARTBEATS_QUEUE, NOTE_EVENTS_QUEUE } from '@vanish/stats';
import { freePort, waitFor } from '@vanish/testkit/net';
import { BROKER_USERS, EXCHANGE, MAIL_QUEUE, PERMISSIONS, TOPIC_PERMISSIONS, WEBHOOK_QUEUE, definitions, type BrokerUser } from './broker-permissions';
import { loadWebhooksConfig } from '../../services/webhooks/src/config';
import { ROOT, composeEnv, parseEnvFile, readCompose, readText } from './deploy-files';

// Hang bounds only: a node boots in 6-30 s on this machine, longer when the CPU is shared.
jest.setTimeout(180_000);

const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const COMPOSE_DEFINITIONS = 'deploy/compose/dev-only/rabbitmq-definitions.json';
const DEV_OVERLAY_DEFINITIONS = 'deploy/k8s/overlays/dev/dev-only/rabbitmq-definitions.json';

interface OwnNode {
  port: number;
  stop(): Promise<void>;
}

function exited(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    child.once('exit', () => { clearTimeout(timer); resolve(true); });
  });
}

/** A RabbitMQ node on loopback ports of its own, loaded with `definitionsFile` at boot. */
async function startOwnNode(definitionsFile: string): Promise<OwnNode> {
  if (!existsSync(RABBITMQ_SERVER)) {
    throw new Error(`${RABBITMQ_SERVER} is missing: apt-get install -y --no-install-recommends rabbitmq-server (the test starts a node of its own from it)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'vanish-broker-perms-'));
  const [port, distPort, epmdPort] = [await freePort(), await freePort(), await freePort()];
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  writeFileSync(join(dir, 'rabbitmq.conf'), [
    `listeners.tcp.default = 127.0.0.1:${port}`,
    `load_definitions = ${definitionsFile}`,
    'loopback_users = none',
    '',
  ].join('\n'));
  writeFileSync(join(dir, '.erlang.cookie'), `VANISHPERMS${randomUUID().replace(/-/g, '').toUpperCase()}`, { mode: 0o400 });
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_NODENAME: `vanishperms${port}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
  };
  // epmd in the foreground, as our child: the node finds it on ERL_EPMD_PORT and starts no daemon
  // of its own, so nothing outlives the test.
  const epmd = spawn('epmd', ['-port', String(epmdPort), '-address', '127.0.0.1'], { env, stdio: 'ignore' });
  const server = spawn(RABBITMQ_SERVER, [], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  server.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  server.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });

  const stop = async () => {
    if (server.pid !== undefined && server.exitCode === null) {
      try { process.kill(-server.pid, 'SIGTERM'); } catch { /* already gone */ }
      if (!(await exited(server, 60_000))) {
        try { process.kill(-server.pid, 'SIGKILL'); } catch { /* already gone */ }
        await exited(server, 10_000);
      }
    }
    epmd.kill('SIGTERM');
    await exited(epmd, 10_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Ready once a definitions user can log in (definitions are imported before that).
    await waitFor(async () => {
      if (server.exitCode !== null) throw new Error(`the RabbitMQ node exited (${server.exitCode}):\n${output.slice(-3000)}`);
      const connection = await amqp.connect(`amqp://vanish:dev-only-rabbitmq-password@127.0.0.1:${port}`).catch(() => undefined);
      await connection?.close();
      return connection !== undefined;
    }, { timeoutMs: 150_000, intervalMs: 500 });
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, stop };
}

/** The AMQP_URL compose gives the service, pointed at our node. */
function serviceUrl(service: BrokerUser, port: number): string {
  const url = new URL(composeEnv(readCompose(), service).AMQP_URL!);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/** Runs `attempt` on a channel of a fresh connection as `url`'s user; resolves with the broker's refusal. */
async function refusal(url: string, attempt: (channel: Channel) => unknown): Promise<string> {
  const connection = await amqp.connect(url);
  try {
    const channel = await connection.createChannel();
    const closed = new Promise<string>((resolve) => {
      channel.once('error', (err: Error) => resolve(err.message));
      channel.once('close', () => resolve('closed without an error'));
    });
    try {
      await attempt(channel);
    } catch {
      // the refusal also arrives as the channel's error
    }
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<string>((resolve) => { timer = setTimeout(() => resolve('not refused'), 20_000); });
    const reason = await Promise.race([closed, bound]);
    clearTimeout(timer);
    if (reason === 'not refused') await channel.close();
    return reason;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

const REFUSED = /403 \(ACCESS-REFUSED\)/;

describe('broker permissions: the shipped files say what the bus topology derives', () => {
  it('when the compose and dev-overlay definitions are read, then their permissions are the derived ones and their passwords those of the services\' AMQP_URLs', () => {
    for (const [file, envDir] of [[COMPOSE_DEFINITIONS, 'deploy/compose/dev-only'], [DEV_OVERLAY_DEFINITIONS, 'deploy/k8s/overlays/dev/dev-only']] as const) {
      const shipped = JSON.parse(readText(file)) as ReturnType<typeof definitions>;
      const passwords = Object.fromEntries(BROKER_USERS.map((user) => {
        const url = new URL(parseEnvFile(`${envDir}/${user}.env`).AMQP_URL!);
        expect(url.username).toBe(user);
        return [user, decodeURIComponent(url.password)];
      })) as Record<BrokerUser, string>;
      expect(shipped).toEqual(definitions(passwords, { name: 'vanish', password: 'dev-only-rabbitmq-password' }));
    }
  });

  it('when the permissions script is read, then it sets exactly the derived permissions for each service', () => {
    const lines = readText('deploy/rabbitmq/set-permissions.sh').split('\n').filter((line) => line.startsWith('vanish_user '));
    const expected = PERMISSIONS.map((p) => {
      const topic = TOPIC_PERMISSIONS.find((t) => t.user === p.user)!;
      expect(topic.exchange).toBe(EXCHANGE);
      return `vanish_user ${p.user} "$${p.user.toUpperCase()}_AMQP_PASSWORD" '${p.configure}' '${p.write}' '${p.read}' '${topic.write}' '${topic.read}'`;
    });
    expect(lines).toEqual(expected);
  });

  it('when the webhooks service loads its defaults, then its queue is the one the permissions name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vanish-webhooks-config-'));
    try {
      expect(loadWebhooksConfig({ DATA_DIR: dir }, silentLogger).queue).toBe(WEBHOOK_QUEUE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when the mailer loads its defaults, then its queue is the one the permissions name', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vanish-mailer-config-'));
    try {
      expect(loadMailerConfig({ DATA_DIR: dir }, silentLogger).mailQueue).toBe(MAIL_QUEUE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('broker permissions on a RabbitMQ node of our own (compose definitions)', () => {
  let node: OwnNode | undefined;
  let port = 0;
  const buses: RabbitMqBus[] = [];
  const connect = async (user: BrokerUser) => {
    const bus = await RabbitMqBus.connect({
      url: serviceUrl(user, port), logger: silentLogger, connectionName: `perms-${user}`,
      // Quorum queues, as production declares them (AMQP_QUEUE_TYPE's production default).
      queues: { type: 'quorum', deliveryLimit: 50 },
      packRoutingKeys: user === 'notes' ? (key) => key.startsWith('note.') : undefined,
    });
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    node = await startOwnNode(join(ROOT, COMPOSE_DEFINITIONS));
    port = node.port;
  });

  afterAll(async () => {
    for (const bus of buses) await bus.close().catch(() => undefined);
    await node?.stop();
  });

  it('when each service works with its own user, then notes publishes, stats and the mailer declare their topology, consume, retry and dead-letter', async () => {
    const statsBus = await connect('stats');
    const mailerBus = await connect('mailer');
    const notesBus = await connect('notes');
    const noteEvents: IncomingMessage[] = [];
    const heartbeats: IncomingMessage[] = [];
    const mailCommands: IncomingMessage[] = [];
    await statsBus.consume({ queue: NOTE_EVENTS_QUEUE, bindings: ['note.*'], maxAttempts: 5, retryDelaysMs: [200] }, async (message) => {
      noteEvents.push(message);
      if (message.body === 'dead') throw new PermanentMessageFailure('never countable');
      if (message.body === 'retry' && message.attempt === 1) throw new RetryMessageLater('later', 200);
    });
    await statsBus.consume({ queue: HEARTBEATS_QUEUE, bindings: ['health.*'], disposable: true }, async (message) => { heartbeats.push(message); });
    await mailerBus.consume({ queue: MAIL_QUEUE, bindings: ['mail.send'], maxAttempts: 5, retryDelaysMs: [200] }, async (message) => {
      mailCommands.push(message);
      if (message.attempt === 1) throw new RetryMessageLater('SMTP 451', 200);
    });
    const webhooksBus = await connect('webhooks');
    const webhookEvents: IncomingMessage[] = [];
    await webhooksBus.consume({ queue: WEBHOOK_QUEUE, bindings: [...WEBHOOK_EVENT_NAMES], maxAttempts: 5, retryDelaysMs: [200] }, async (message) => {
      webhookEvents.push(message);
      if (message.attempt === 1) throw new RetryMessageLater('receiver down', 200);
    });

    await notesBus.publish([
      { id: randomUUID(), routingKey: 'note.created', body: 'retry' },
      { id: randomUUID(), routingKey: 'note.accessed', body: 'ok' },
      { id: randomUUID(), routingKey: 'note.expired', body: 'dead' },
      { id: randomUUID(), routingKey: 'mail.send', body: 'sealed command' },
      { id: randomUUID(), routingKey: 'health.notes', body: 'notes heartbeat' },
    ]);
    await mailerBus.publish([{ id: randomUUID(), routingKey: 'health.mailer', body: 'mailer heartbeat' }]);

    await waitFor(() => noteEvents.some((m) => m.body === 'retry' && m.attempt === 2), { timeoutMs: 60_000 });
    await waitFor(() => mailCommands.some((m) => m.attempt === 2), { timeoutMs: 60_000 });
    await waitFor(() => heartbeats.length === 2, { timeoutMs: 60_000 });
    await waitFor(() => webhookEvents.filter((m) => m.attempt === 2).length === 2, { timeoutMs: 60_000 });
    expect([...new Set(webhookEvents.map((m) => m.routingKey))].sort()).toEqual(['note.accessed', 'note.expired']);
    expect(noteEvents.map((m) => m.routingKey).sort()).toEqual(['note.accessed', 'note.created', 'note.created', 'note.expired']);
    expect(mailCommands.map((m) => m.body)).toEqual(['sealed command', 'sealed command']);
    expect(heartbeats.map((m) => m.routingKey).sort()).toEqual(['health.mailer', 'health.notes']);

    const admin = await amqp.connect(`amqp://vanish:dev-only-rabbitmq-password@127.0.0.1:${port}`);
    try {
      const channel = await admin.createChannel();
      await waitFor(async () => (await channel.checkQueue(dlqName(NOTE_EVENTS_QUEUE))).messageCount === 1, { timeoutMs: 60_000 });
      await channel.close();
    } finally {
      await admin.close();
    }
  });

  it('when stats\' user tries what is not its work, then the broker refuses it: a publish to the mail exchange, a purge, and reading or deleting the mail queue', async () => {
    const stats = serviceUrl('stats', port);
    // The mail queue exists (the mailer declared it above, or declares it now).
    await connect('mailer').then((bus) => bus.consume({ queue: MAIL_QUEUE, bindings: ['mail.send'] }, async () => {}));

    expect(await refusal(stats, (ch) => ch.publish(EXCHANGE, 'mail.send', Buffer.from('forged command')))).toMatch(REFUSED);
    expect(await refusal(stats, (ch) => ch.publish(EXCHANGE, 'note.created', Buffer.from('forged event')))).toMatch(REFUSED);
    expect(await refusal(stats, (ch) => ch.purgeQueue(MAIL_QUEUE))).toMatch(REFUSED);
    expect(await refusal(stats, (ch) => ch.purgeQueue(dlqName(MAIL_QUEUE)))).toMatch(REFUSED);
    expect(await refusal(stats, (ch) => ch.consume(MAIL_QUEUE, () => undefined))).toMatch(REFUSED);
    expect(await refusal(stats, (ch) => ch.deleteQueue(MAIL_QUEUE))).toMatch(REFUSED);
    // Nor can it bind a queue of its own to the mail commands (the topic permission reads binding keys).
    expect(await refusal(stats, (ch) => ch.bindQueue(NOTE_EVENTS_QUEUE, EXCHANGE, 'mail.send'))).toMatch(REFUSED);
    expect(await refusal(stats, (ch) => ch.bindQueue(NOTE_EVENTS_QUEUE, EXCHANGE, '#'))).toMatch(REFUSED);
    expect(await refusal(stats, (ch) => ch.assertQueue('stats.elsewhere', { durable: true }))).toMatch(REFUSED);
  });

  it('when notes\' and the mailer\'s users step outside their work, then the broker refuses them too', async () => {
    const notes = serviceUrl('notes', port);
    const mailer = serviceUrl('mailer', port);
    expect(await refusal(notes, (ch) => ch.consume(MAIL_QUEUE, () => undefined))).toMatch(REFUSED);
    expect(await refusal(notes, (ch) => ch.purgeQueue(NOTE_EVENTS_QUEUE))).toMatch(REFUSED);
    expect(await refusal(notes, (ch) => ch.publish(EXCHANGE, 'health.stats', Buffer.from('forged heartbeat')))).toMatch(REFUSED);
    expect(await refusal(mailer, (ch) => ch.publish(EXCHANGE, 'note.created', Buffer.from('forged event')))).toMatch(REFUSED);
    expect(await refusal(mailer, (ch) => ch.purgeQueue(NOTE_EVENTS_QUEUE))).toMatch(REFUSED);
    expect(await refusal(mailer, (ch) => ch.consume(HEARTBEATS_QUEUE, () => undefined))).toMatch(REFUSED);
  });

  it('when the definitions file is read, then its users are only the administrator and the four services (no guest, no shared user)', () => {
    const shipped = JSON.parse(readFileSync(join(ROOT, COMPOSE_DEFINITIONS), 'utf8')) as { users: Array<{ name: string }> };
    expect(shipped.users.map((u) => u.name).sort()).toEqual(['mailer', 'notes', 'stats', 'vanish', 'webhooks']);
  });
});

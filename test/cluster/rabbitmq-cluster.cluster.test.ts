import { declareVanishTopology } from '../../services/all-in-one/src/cli/declare-topology';
import { background, sleep, startSystem, type System } from '../resilience/support/system';
import { startRabbitCluster, type RabbitCluster } from './support/rabbitmq-cluster';

// The four services as processes (needs `npm run build`) on a three-node RabbitMQ cluster of the
// test's own, with quorum queues; the node that leads stats' note-events queue is killed and
// restarted while notes are created (half with a link e-mail) and revealed.
jest.setTimeout(600_000);

describe('RabbitMQ cluster: the queue leader dies under load', () => {
  let cluster: RabbitCluster;
  let sys: System;
  const timings: Record<string, number> = {};

  beforeAll(async () => {
    let started = Date.now();
    cluster = await startRabbitCluster(3);
    timings.clusterStartMs = Date.now() - started;
    started = Date.now();
    const quorum = { AMQP_QUEUE_TYPE: 'quorum', AMQP_DELIVERY_LIMIT: '20' };
    sys = await startSystem({
      broker: { url: cluster.urlList, queueDepths: (prefix) => cluster.queueDepths(prefix) },
      env: { stats: quorum, mailer: quorum, webhooks: quorum },
    });
    timings.systemStartMs = Date.now() - started;
  });

  afterAll(async () => {
    await sys?.stop();
    await cluster?.stop();
    process.stdout.write(`${JSON.stringify({ measured: 'rabbitmq cluster test', ...timings })}\n`);
  });

  it('when the deploy-time declaration runs against the cluster, then it declares the same topology the services did (quorum, idempotent)', async () => {
    const { queues } = await declareVanishTopology({
      AMQP_URL: cluster.urlList, AMQP_EXCHANGE: sys.tag, AMQP_QUEUE_TYPE: 'quorum', AMQP_DELIVERY_LIMIT: '20',
      AMQP_QUEUE_PREFIX: `${sys.tag}.`, MAIL_QUEUE: `${sys.tag}.mailer.mail-commands`, WEBHOOK_QUEUE: `${sys.tag}.webhooks.note-events`, WEBHOOK_RETRY_DELAYS_MS: '300,1000',
    });
    expect(queues).toEqual([`${sys.tag}.stats.note-events`, `${sys.tag}.stats.heartbeats`, `${sys.tag}.mailer.mail-commands`, `${sys.tag}.webhooks.note-events`]);
    const types = JSON.parse(await cluster.ctl(['list_queues', 'name', 'type', '--formatter', 'json'])) as Array<{ name: string; type: string }>;
    const ours = types.filter((q) => q.name.startsWith(sys.tag));
    expect(ours.length).toBeGreaterThanOrEqual(6);
    expect(ours.filter((q) => q.type !== 'quorum')).toEqual([]);
  });

  it('when the node leading the queues is killed and restarted during creates and reveals, then every 200 create is counted once, every e-mail is sent once, and no dead letter appears', async () => {
    let mailed = 0;
    let n = 0;
    const traffic = background(async () => {
      n += 1;
      const withMail = n % 2 === 0;
      const created = await sys.create({ content: `cluster ${n}`, max_views: 1, ...(withMail ? { send_link_email: `reader${n}@example.com` } : {}) });
      if (created.status !== 200) return;
      if (withMail) mailed += 1;
      await sys.reveal(created.body.uuid);
    }, 20);
    await sleep(3_000);
    const leader = await cluster.leaderOf(`${sys.tag}.stats.note-events`);
    const killedAt = Date.now();
    await cluster.kill(leader);
    await sleep(8_000);
    await cluster.restart(leader);
    timings.leaderDownAndBackMs = Date.now() - killedAt;
    await sleep(3_000);
    await traffic.stop();
    timings.leader = leader;
    // The services connect to the first node that answers (node 0, where stats declared the queue and
    // so where its leader was placed): they must have failed over to another node.
    // Back at once on another node: `reconnected to RabbitMQ`; after failed attempts: `rabbitmq reachable again`.
    timings.reconnections = sys.logs().split(/reconnected to RabbitMQ"|"rabbitmq reachable again"/).length - 1;
    if (leader === 0) expect(timings.reconnections).toBeGreaterThan(0);
    timings.createsOk = sys.created.size;
    timings.mails = mailed;
    expect(sys.created.size).toBeGreaterThan(10);

    const drainStarted = Date.now();
    await sys.checkInvariants({ exactTotal: true, timeoutMs: 180_000 }); // counted exactly once, outbox drained, every queue (DLQs too) empty, no 5xx
    timings.drainMs = Date.now() - drainStarted;
    const arrived = await sys.sink.waitForMessages(mailed, 120_000);
    await sleep(2_000);
    const ids = sys.sink.messages.map((m) => m.parsed.messageId);
    expect(new Set(ids).size).toBe(ids.length); // no e-mail twice (per Message-ID)
    expect(arrived.length).toBeGreaterThanOrEqual(mailed);
    expect(sys.sink.messages.length).toBe(mailed);
  });
});

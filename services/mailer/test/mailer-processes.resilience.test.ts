import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { startFaultProxy, type FaultProxy } from '@vanish/testkit/fault-proxy';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { waitFor } from '@vanish/testkit/net';
import type { MailCommand } from '@vanish/common';
import { sleep, startBroker, type Broker } from './support/mailer-harness';

jest.setTimeout(90_000);
// In full CI runs on the loaded 2-core machine tests of this file went past their bounds (two replicas
// taking turns at migrating MariaDB; the broker noticing a killed consumer through the proxy); the
// bounds now allow for that. One retry, with the first failure logged, stays until a few full runs
// show no first failures (closing note of session 1); then remove it.
jest.retryTimes(1, { logErrorsBeforeRetry: true });

const MAIN = join(__dirname, '..', 'dist', 'main.js');
const link = (to: string): MailCommand => ({
  kind: 'link', to, link: 'https://vanish.test/0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a', expiry_type: 'time',
  expires_at: '2026-12-01 00:00:00', max_views: 100, created_at: '2026-11-01 00:00:00',
});

function requireBuild(): void {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (these tests run the built mailer as processes)`);
}

async function startMailer(env: Record<string, string>): Promise<RunningProcess> {
  return runProcess({ script: MAIN, env: { ...env, LOG_LEVEL: 'info', NODE_ENV: 'test' }, readyLine: /mailer started/, readyTimeoutMs: 30_000 });
}

async function metric(adminPort: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
  return text.split('\n').filter((l) => l.startsWith(name)).reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

const adminPortOf = async (p: RunningProcess) => Number(JSON.parse(await p.waitForOutput(/mailer started/)).adminPort);

describe('mailer processes killed between receiving and acking', () => {
  let broker: Broker;
  let sink: SmtpSink;
  let amqpProxy: FaultProxy;
  const processes: RunningProcess[] = [];

  beforeAll(async () => {
    requireBuild();
    broker = await startBroker('mailer-kill');
    sink = await startSmtpSink();
    amqpProxy = await startFaultProxy({ targetHost: '127.0.0.1', targetPort: 5672 });
  });
  afterAll(async () => {
    for (const p of processes) if (!p.exitStatus()) await p.stop();
    await amqpProxy?.close();
    await sink?.close();
    await broker?.close([1000, 2000]);
  });

  const env = () => broker.env({ SMTP_URL: sink.url, SMTP_TIMEOUT_MS: '15000', AMQP_URL: `amqp://guest:guest@127.0.0.1:${amqpProxy.port}` });

  it('when the mailer is killed before the SMTP server accepted, then the e-mail arrives after a restart (at least once)', async () => {
    const first = await startMailer(env());
    processes.push(first);
    await waitFor(async () => (await broker.messagesIn(broker.queue)) >= 0);
    sink.neverGreet();
    await broker.publish(link('kim@example.com'));
    await waitFor(async () => (await broker.messagesIn(broker.queue)) === 0, { description: 'command delivered (unacked)' });
    await sleep(300);
    first.kill('SIGKILL');
    await first.exited;
    sink.comeBack();
    expect(sink.messages).toHaveLength(0);

    const second = await startMailer(env());
    processes.push(second);
    // The killed attempt holds the command for SMTP_TIMEOUT_MS (15 s) from its start; then it is sent.
    await sink.waitForMessages(1, 45_000);
    await sleep(1000);
    expect(sink.messages).toHaveLength(1);
    await second.stop();
  });

  it('when the mailer is killed after a confirmed send but before its ack reached the broker, then the redelivered command is not sent twice', async () => {
    sink.messages.length = 0;
    amqpProxy.restore(); // a failed earlier attempt may have left it stalled
    const first = await startMailer(env());
    processes.push(first);
    sink.neverGreet();
    const id = await broker.publish(link('lee@example.com'));
    await waitFor(async () => (await broker.messagesIn(broker.queue)) === 0, { description: 'command delivered (unacked)' });
    amqpProxy.stall(); // the ack will be written into a connection that forwards nothing
    sink.comeBack();
    await sink.waitForMessages(1, 20_000);
    await first.waitForOutput(/e-mail sent/, 30_000);
    first.kill('SIGKILL');
    await first.exited;
    // Drop the held connection (and the ack in it) so the broker sees the consumer gone at once;
    // a stalled link whose client died is otherwise noticed only when the broker's heartbeats give up.
    amqpProxy.cut();
    amqpProxy.restore();

    const second = await startMailer(env());
    processes.push(second);
    // The broker redelivers once it notices the killed consumer's connection is gone (up to two
    // AMQP heartbeats through the proxy), which takes longer on a loaded machine: a hang bound only.
    const line = await second.waitForOutput(/already sent/, 60_000);
    expect(JSON.parse(line).commandId).toBe(id);
    await sleep(500);
    expect(sink.messages).toHaveLength(1);
    expect(await broker.messagesIn(broker.queue)).toBe(0);
    await second.stop();
  }, 150_000);
});

describe('two mailer processes sharing one MariaDB', () => {
  let broker: Broker;
  let sink: SmtpSink;
  let db: TestDatabase;
  const processes: RunningProcess[] = [];

  beforeAll(async () => {
    requireBuild();
    broker = await startBroker('mailer-quota');
    sink = await startSmtpSink();
    db = await createTestDatabase('vanish_mailer');
  });
  afterAll(async () => {
    for (const p of processes) if (!p.exitStatus()) await p.stop();
    await sink?.close();
    await broker?.close([1000, 2000]);
    await db?.drop();
  });

  it('when one recipient is sent more than its hourly quota through two mailers, then only the quota arrives and the rest is counted', async () => {
    const env = broker.env({ SMTP_URL: sink.url, DATABASE_URL: db.url, MAIL_QUOTA_PER_HOUR: '3', MAIL_PREFETCH: '1' });
    const [a, b] = await Promise.all([startMailer({ ...env, INSTANCE_ID: 'mailer-a' }), startMailer({ ...env, INSTANCE_ID: 'mailer-b' })]);
    processes.push(a!, b!);
    const ports = [await adminPortOf(a!), await adminPortOf(b!)];
    await waitFor(async () => (await broker.messagesIn(broker.queue)) >= 0, { description: 'mail queue declared' });
    for (let i = 0; i < 10; i += 1) await broker.publish(link(i % 2 ? 'Quinn@Example.com' : 'quinn@example.com'));
    const total = async (name: string) => (await metric(ports[0]!, name)) + (await metric(ports[1]!, name));
    await waitFor(async () => (await total('mailer_emails_sent_total')) + (await total('mailer_quota_exceeded_total')) >= 10, { timeoutMs: 20_000 });
    expect(await total('mailer_emails_sent_total')).toBe(3);
    expect(await total('mailer_quota_exceeded_total')).toBe(7);
    expect(sink.messages).toHaveLength(3);
    // both replicas took part
    for (const port of ports) {
      expect((await metric(port, 'mailer_emails_sent_total')) + (await metric(port, 'mailer_quota_exceeded_total'))).toBeGreaterThan(0);
    }
    expect(a!.output()).not.toContain('quinn@');
    expect(b!.output()).not.toContain('quinn@');
    expect(a!.output() + b!.output()).toContain('q***@e***.com');
  });
});

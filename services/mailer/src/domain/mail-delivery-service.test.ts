import { ManualClock, silentLogger, type MailCommand } from '@vanish/common';
import { FakeMailerStore } from '../adapters/fakes/fake-mailer-store';
import { FakeMailTransport } from '../adapters/fakes/fake-mail-transport';
import { AddressHasher } from './address-hasher';
import { MailDeliveryService, type MailerObserver } from './mail-delivery-service';
import { MailDeliveryError } from './mail-transport';
import { RetryPolicy } from './retry-policy';
import { UnsubscribeTokens } from './unsubscribe-tokens';

const KEY = Buffer.alloc(32, 7);
const LINK = 'http://localhost:8080/0b5d2a8e-1c1f-4f3b-9d7e-3f2a1b4c5d6e';

function linkCommand(to = 'alice@example.com'): MailCommand {
  return { kind: 'link', to, link: LINK, expiry_type: 'both', expires_at: '2026-01-02 00:00:00', max_views: 3, created_at: '2026-01-01 00:00:00' };
}

function notification(to = 'alice@example.com'): MailCommand {
  return { kind: 'notification', to, read_at: '2026-01-01 10:00:00', views_left: 2 };
}

function setup(options: { perHour?: number; perDay?: number; horizonMs?: number; attemptLeaseMs?: number } = {}) {
  const store = new FakeMailerStore();
  const transport = new FakeMailTransport();
  const clock = new ManualClock();
  const counts = { sent: 0, failed: 0, dead: 0, quota: 0 };
  const observer: MailerObserver = {
    sent: () => { counts.sent += 1; }, failed: () => { counts.failed += 1; },
    deadLettered: () => { counts.dead += 1; }, quotaExceeded: () => { counts.quota += 1; },
  };
  const hasher = new AddressHasher(KEY);
  const tokens = new UnsubscribeTokens(KEY);
  const service = new MailDeliveryService({
    store, transport, hasher, tokens, clock, observer, logger: silentLogger,
    retryPolicy: new RetryPolicy({ initialDelayMs: 1000, maxDelayMs: 60_000, horizonMs: options.horizonMs ?? 3_600_000 }, () => 0.99),
    mailFrom: 'notes@vanish.test', publicBaseUrl: 'http://localhost:8080',
    quotaPerHour: options.perHour ?? 10, quotaPerDay: options.perDay ?? 50, attemptLeaseMs: options.attemptLeaseMs ?? 120_000,
  });
  return { store, transport, clock, counts, service, hasher, tokens };
}

describe('MailDeliveryService', () => {
  it('when a link command arrives, then one e-mail with the link, the rule and an unsubscribe header is sent', async () => {
    const { service, transport, counts } = setup();
    await expect(service.deliver('cmd-1', linkCommand())).resolves.toEqual({ status: 'sent' });
    expect(transport.sent).toHaveLength(1);
    const email = transport.sent[0]!;
    expect(email.to).toBe('alice@example.com');
    expect(email.text).toContain(LINK);
    expect(email.html).toContain(LINK);
    expect(email.text).toContain('after 3 views or on 2026-01-02 00:00:00 UTC, whichever comes first');
    expect(email.headers['List-Unsubscribe']).toMatch(/^<http:\/\/localhost:8080\/unsubscribe\/u1\.[^>]+>$/);
    expect(email.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    expect(email.messageId).toBe('<cmd-1@vanish.test>');
    expect(counts.sent).toBe(1);
  });

  it('when a notification command arrives, then the e-mail holds neither a note link nor anything but fixed text', async () => {
    const { service, transport } = setup();
    await service.deliver('cmd-1', notification());
    const email = transport.sent[0]!;
    expect(email.text).toContain('was read on 2026-01-01 10:00:00 UTC');
    expect(email.text).toContain('2 more times');
    const withoutUnsubscribe = email.text.split('To receive no more')[0]!;
    expect(withoutUnsubscribe).not.toMatch(/https?:\/\//);
  });

  it('when the same command is delivered twice after a send, then it is sent once', async () => {
    const { service, transport } = setup();
    await service.deliver('cmd-1', linkCommand());
    await expect(service.deliver('cmd-1', linkCommand())).resolves.toEqual({ status: 'duplicate' });
    expect(transport.sent).toHaveLength(1);
  });

  it('when a recipient reached its hourly quota, then further e-mails are not sent and counted, and an hour later they are', async () => {
    const { service, transport, counts, clock } = setup({ perHour: 2 });
    await service.deliver('a', linkCommand());
    await service.deliver('b', linkCommand('ALICE@example.com '));
    await expect(service.deliver('c', linkCommand())).resolves.toEqual({ status: 'over_quota' });
    expect(transport.sent).toHaveLength(2);
    expect(counts.quota).toBe(1);
    await expect(service.deliver('c', linkCommand())).resolves.toEqual({ status: 'duplicate' });
    expect(counts.quota).toBe(1);
    clock.advance(3_600_001);
    await expect(service.deliver('d', linkCommand())).resolves.toEqual({ status: 'sent' });
  });

  it('when ten link e-mails went to an address, then a read notification to it is still sent, and each kind stops at its own quota', async () => {
    const { service, transport, counts } = setup({ perHour: 10 });
    for (let i = 0; i < 10; i += 1) await expect(service.deliver(`link-${i}`, linkCommand())).resolves.toEqual({ status: 'sent' });
    await expect(service.deliver('link-10', linkCommand())).resolves.toEqual({ status: 'over_quota' });
    await expect(service.deliver('read-0', notification('Alice@Example.com'))).resolves.toEqual({ status: 'sent' });
    expect(transport.sent.map((e) => e.to)).toHaveLength(11);
    for (let i = 1; i < 10; i += 1) await expect(service.deliver(`read-${i}`, notification())).resolves.toEqual({ status: 'sent' });
    await expect(service.deliver('read-10', notification())).resolves.toEqual({ status: 'over_quota' });
    expect(counts.quota).toBe(2);
  });

  it('when a recipient reached its daily quota, then nothing more is sent that day', async () => {
    const { service, clock } = setup({ perHour: 1, perDay: 2 });
    await service.deliver('a', linkCommand());
    clock.advance(3_600_001);
    await service.deliver('b', linkCommand());
    clock.advance(3_600_001);
    await expect(service.deliver('c', linkCommand())).resolves.toEqual({ status: 'over_quota' });
  });

  it('when the SMTP server answers temporarily, then a retry with a growing delay is asked and the quota is counted once', async () => {
    const { service, transport, clock, counts } = setup({ perHour: 1 });
    transport.failWith(new MailDeliveryError('temporary', 'SMTP 451'), new MailDeliveryError('temporary', 'SMTP 451'));
    const first = await service.deliver('a', linkCommand());
    clock.advance(1000);
    const second = await service.deliver('a', linkCommand());
    expect(first).toMatchObject({ status: 'retry', delayMs: 1000 });
    expect(second).toMatchObject({ status: 'retry', delayMs: 2000 });
    await expect(service.deliver('a', linkCommand())).resolves.toEqual({ status: 'sent' });
    expect(transport.sent).toHaveLength(1);
    expect(counts.failed).toBe(2);
  });

  it('when the retry horizon is reached, then the command is dead-lettered with the reason', async () => {
    const { service, transport, clock } = setup({ horizonMs: 2500 });
    transport.failWith(...Array.from({ length: 5 }, () => new MailDeliveryError('temporary', 'ECONNECTION: refused')));
    await expect(service.deliver('a', linkCommand())).resolves.toMatchObject({ status: 'retry' });
    clock.advance(1000);
    const outcome = await service.deliver('a', linkCommand());
    expect(outcome).toMatchObject({ status: 'dead' });
    expect((outcome as { reason: string }).reason).toContain('retries exhausted after 2 attempts: ECONNECTION');
  });

  it('when the server rejects the recipient permanently, then it is dead-lettered and the address gets nothing more', async () => {
    const { service, transport, store, hasher, counts } = setup();
    transport.failWith(new MailDeliveryError('permanent', 'SMTP 550 at RCPT TO: no such user', { recipientRejected: true }));
    await expect(service.deliver('a', linkCommand())).resolves.toEqual({ status: 'dead', reason: 'rejected: SMTP 550 at RCPT TO: no such user' });
    expect(await store.isSuppressed(hasher.hash('alice@example.com'))).toBe(true);
    await expect(service.deliver('b', notification())).resolves.toEqual({ status: 'suppressed' });
    expect(transport.sent).toHaveLength(0);
    expect(counts.dead).toBe(1);
  });

  it('when the address unsubscribed while a retry waited, then the retry sends nothing', async () => {
    const { service, transport, store, hasher } = setup();
    transport.failWith(new MailDeliveryError('temporary', 'SMTP 451'));
    await service.deliver('a', linkCommand());
    await store.suppress(hasher.hash('alice@example.com'), 'unsubscribed');
    await expect(service.deliver('a', linkCommand())).resolves.toEqual({ status: 'suppressed' });
    expect(transport.sent).toHaveLength(0);
  });

  it('when the store fails after the SMTP server accepted, then the error surfaces and the redelivery waits for the attempt\'s lease, then sends again (the at-least-once window)', async () => {
    const { service, transport, store, clock } = setup();
    const markSent = store.markSent.bind(store);
    store.markSent = async () => { throw new Error('database gone'); };
    await expect(service.deliver('a', linkCommand())).rejects.toThrow('database gone');
    store.markSent = markSent;
    await expect(service.deliver('a', linkCommand())).resolves.toMatchObject({ status: 'retry' });
    expect(transport.sent).toHaveLength(1);
    clock.advance(120_000);
    await expect(service.deliver('a', linkCommand())).resolves.toEqual({ status: 'sent' });
    expect(transport.sent).toHaveLength(2);
  });

  it('when the same command is delivered twice at once (a repeated publish, a redelivery while the first still sends), then one e-mail goes out and the other delivery is retried, then recognised as a duplicate', async () => {
    const { service, transport, clock } = setup();
    const [first, second] = await Promise.all([service.deliver('a', linkCommand()), service.deliver('a', linkCommand())]);
    expect([first.status, second.status].sort()).toEqual(['retry', 'sent']);
    expect(transport.sent).toHaveLength(1);
    clock.advance(10_000);
    await expect(service.deliver('a', linkCommand())).resolves.toEqual({ status: 'duplicate' });
    expect(transport.sent).toHaveLength(1);
  });

  it('when a send fails for now, then its retry may send at once: the attempt no longer holds the command', async () => {
    const { service, transport } = setup();
    transport.failWith(new MailDeliveryError('temporary', 'greylisted'));
    await expect(service.deliver('a', linkCommand())).resolves.toMatchObject({ status: 'retry' });
    await expect(service.deliver('a', linkCommand())).resolves.toEqual({ status: 'sent' });
    expect(transport.sent).toHaveLength(1);
  });
  it('when a send takes longer than the lease (a slow relay, a wait for a pooled connection), then its hold is renewed and another delivery of the command meanwhile sends nothing', async () => {
    const { service, transport, clock } = setup({ attemptLeaseMs: 60 });
    let release: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => { release = resolve; });
    const send = transport.send.bind(transport);
    transport.send = async (email) => { if (transport.sent.length === 0) await slow; return send(email); };
    const first = service.deliver('cmd-slow', linkCommand());
    for (let i = 0; i < 5; i += 1) {
      clock.advance(50); // past the first lease by the end
      await new Promise((resolve) => setTimeout(resolve, 30)); // the renewals run on real time
    }
    await expect(service.deliver('cmd-slow', linkCommand())).resolves.toMatchObject({ status: 'retry' });
    release();
    await expect(first).resolves.toEqual({ status: 'sent' });
    expect(transport.sent).toHaveLength(1);
  });

  it('when the sent mark waits for the database longer than the lease, then the command stays held: a redelivery meanwhile sends nothing', async () => {
    const { service, transport, store, clock } = setup({ attemptLeaseMs: 60 });
    let commit: () => void = () => undefined;
    const markSent = store.markSent.bind(store);
    store.markSent = async (id: string) => { await new Promise<void>((resolve) => { commit = resolve; }); return markSent(id); };
    const first = service.deliver('cmd-mark', linkCommand());
    for (let i = 0; i < 5; i += 1) {
      clock.advance(50); // past the first lease by the end, while the mark waits
      await new Promise((resolve) => setTimeout(resolve, 30));
    }
    expect(transport.sent).toHaveLength(1);
    await expect(service.deliver('cmd-mark', linkCommand())).resolves.toMatchObject({ status: 'retry' });
    commit();
    await expect(first).resolves.toEqual({ status: 'sent' });
    await expect(service.deliver('cmd-mark', linkCommand())).resolves.toEqual({ status: 'duplicate' });
    expect(transport.sent).toHaveLength(1);
  });

  it('when the SMTP server cannot be reached, then each failed send is told to its outage (not logged one by one) and the next send it takes ends the outage; a refusal of its own is not an outage', async () => {
    const store = new FakeMailerStore();
    const transport = new FakeMailTransport();
    const told: string[] = [];
    const smtpOutage = { failed: (detail: { commandId: string }) => { told.push(`failed ${detail.commandId}`); }, answered: () => { told.push('answered'); } };
    const service = new MailDeliveryService({
      store, transport, hasher: new AddressHasher(KEY), tokens: new UnsubscribeTokens(KEY), clock: new ManualClock(), logger: silentLogger,
      retryPolicy: new RetryPolicy({ initialDelayMs: 1000, maxDelayMs: 60_000, horizonMs: 3_600_000 }, () => 0.99),
      mailFrom: 'notes@vanish.test', publicBaseUrl: 'http://localhost:8080', quotaPerHour: 10, quotaPerDay: 50, attemptLeaseMs: 120_000, smtpOutage,
    });
    transport.failWith(
      new MailDeliveryError('temporary', 'ECONNREFUSED at CONN: connect ECONNREFUSED 127.0.0.1:25'),
      new MailDeliveryError('temporary', 'ETIMEDOUT at CONN: Greeting never received'),
      new MailDeliveryError('temporary', 'SMTP 451 at MAIL FROM: Try again later', { responseCode: 451 }),
    );
    for (const id of ['a', 'b', 'c']) await expect(service.deliver(id, linkCommand())).resolves.toMatchObject({ status: 'retry' });
    await expect(service.deliver('a', linkCommand())).resolves.toEqual({ status: 'sent' });
    expect(told).toEqual(['failed a', 'failed b', 'answered']);
  });
});

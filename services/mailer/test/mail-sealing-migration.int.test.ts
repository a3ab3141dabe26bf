import { join } from 'node:path';
import { publicRingOf, silentLogger } from '@vanish/common';
import { createNotesService, loadNotesConfig, type NotesService } from '@vanish/notes';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { waitFor } from '@vanish/testkit/net';
import { loadMailerConfig } from '../src/config';
import { createMailerService, type MailerService } from '../src/compose';
import { counter, sleep, startBroker, type Broker } from './support/mailer-harness';

jest.setTimeout(180_000);

/**
 * The migration of DECISIONS 1 with the real notes service, the real RabbitMQ and a real SMTP
 * server: commands sealed under the legacy symmetric MAIL_KEYS and commands sealed to the mailer's
 * public keys wait in the same queue; the mailer holding both rings delivers each exactly once;
 * once the legacy ring is retired, new notes still get their e-mail.
 */
describe('mail commands across the migration from MAIL_KEYS to sealing to the mailer', () => {
  let broker: Broker;
  let sink: SmtpSink;
  let notes: NotesService | undefined;
  let mailer: MailerService | undefined;

  beforeAll(async () => {
    broker = await startBroker('mail-migration');
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await notes?.stop();
    await mailer?.stop();
    await sink?.close();
    await broker?.close([1000, 2000, 10_000]);
  });

  const baseEnv = () => {
    const { MAIL_KEYS: _legacy, MAIL_PRIVATE_KEYS: _private, ...env } = broker.env({ SMTP_URL: sink.url });
    return env;
  };
  const startNotes = async (keys: Record<string, string>) => {
    const service = await createNotesService(loadNotesConfig({
      ...baseEnv(), ...keys, DATABASE_URL: `sqlite:${join(broker.dataDir, 'notes.db')}`,
    }), { logger: silentLogger });
    const { port } = await service.start();
    return { service, port };
  };
  const startMailer = async (keys: Record<string, string>) => {
    const service = await createMailerService(loadMailerConfig({ ...baseEnv(), ...keys }), { logger: silentLogger });
    await service.start();
    await waitFor(async () => (await broker.messagesIn(broker.queue)) >= 0, { description: 'mail queue declared' });
    return service;
  };
  const create = async (port: number, to: string) => {
    const res = await fetch(`http://127.0.0.1:${port}/api/create.php`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: `for ${to}`, send_link_email: to }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { url: string }).url;
  };
  const queued = async (n: number) => waitFor(async () => ((await broker.messagesIn(broker.queue)) === n ? n : undefined), {
    timeoutMs: 30_000, description: `${n} mail commands queued`,
  });

  it('when legacy and new commands are queued together, then every link e-mail is delivered exactly once, also after MAIL_KEYS is retired', async () => {
    const legacyRing = { MAIL_KEYS: broker.ring.serialize() };
    const privateRing = { MAIL_PRIVATE_KEYS: broker.privateRing.serialize() };
    const publicRing = { MAIL_PUBLIC_KEYS: publicRingOf(broker.privateRing).serialize() };
    const links = new Map<string, string>();

    // The mail queue exists (a mailer ran once), then the mailer is down while commands queue up.
    mailer = await startMailer({ ...legacyRing, ...privateRing });
    await mailer.stop();
    mailer = undefined;

    // Notes before the migration: MAIL_KEYS only.
    let running = await startNotes(legacyRing);
    notes = running.service;
    for (const to of ['old-1@example.com', 'old-2@example.com', 'old-3@example.com']) links.set(to, await create(running.port, to));
    await queued(3);
    await notes.stop();

    // Notes migrated: the mailer's public keys only; MAIL_KEYS removed from its secrets.
    running = await startNotes(publicRing);
    notes = running.service;
    for (const to of ['new-1@example.com', 'new-2@example.com', 'new-3@example.com']) links.set(to, await create(running.port, to));
    await queued(6);
    const [oldBody, newBody] = [await broker.channel.get(broker.queue), await broker.channel.get(broker.queue)];
    broker.channel.nackAll(true);
    expect(JSON.parse(oldBody ? oldBody.content.toString() : '{}').sealed).toMatch(/^m1\./);
    expect(oldBody && newBody).toBeTruthy();

    // The mailer holding both rings drains the mixed queue; the first two attempts meet a 451 and are retried.
    sink.failNext(2, 451);
    mailer = await startMailer({ ...legacyRing, ...privateRing });
    await waitFor(() => (new Set(sink.messages.map((m) => m.to[0])).size === 6 ? true : undefined), { timeoutMs: 60_000, description: 'six e-mails' });
    // Opens are counted, retries included: three legacy commands, some of them tried twice.
    expect(await counter(mailer.registry, 'mailer_legacy_mail_commands_opened_total')).toBeGreaterThanOrEqual(3);

    // Drained: nothing queued or waiting for a retry; the legacy ring is retired.
    await waitFor(async () => ((await broker.messagesIn(broker.queue)) === 0 ? true : undefined));
    await mailer.stop();
    mailer = await startMailer(privateRing);
    for (const to of ['after-1@example.com', 'after-2@example.com']) links.set(to, await create(running.port, to));
    await waitFor(() => (new Set(sink.messages.map((m) => m.to[0])).size === 8 ? true : undefined), { timeoutMs: 60_000, description: 'eight e-mails' });
    await sleep(1_500);

    const delivered = sink.messages.map((m) => m.to[0]!).sort();
    expect(delivered).toEqual([...links.keys()].sort());
    for (const mail of sink.messages) expect(mail.parsed.text).toContain(links.get(mail.to[0]!)!);
    expect(await counter(mailer.registry, 'mailer_legacy_mail_commands_opened_total')).toBe(0);
    expect(await broker.drainDlq()).toEqual([]);
  });
});

import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  ConsumerOpener, KeyRing, MAIL_SEAL_PURPOSE, MessageSealer, aeadOpen, publicRingOf, silentLogger,
} from '@vanish/common';
import { dlqName } from '@vanish/bus';
import { createNotesService, loadNotesConfig, type NotesService } from '@vanish/notes';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { waitFor } from '@vanish/testkit/net';
import { loadMailerConfig } from '../src/config';
import { createMailerService } from '../src/compose';
import { startBroker, type Broker } from './support/mailer-harness';

jest.setTimeout(180_000);

const key = () => randomBytes(32).toString('base64');

/**
 * The promise of DECISIONS 1 for send_link_email: the notes database (its outbox and what deleted
 * rows left in the file), the broker's queues (a queued command, a dead-lettered one, and a copy of
 * everything the exchange carried) and every notes secret together do not give back a link or a uuid.
 */
describe('what notes holds does not open a send_link_email link', () => {
  let broker: Broker;
  let sink: SmtpSink;
  let notes: NotesService | undefined;

  beforeAll(async () => {
    broker = await startBroker('open-no-link');
    sink = await startSmtpSink();
  });
  afterAll(async () => {
    await notes?.stop();
    await sink?.close();
    await broker?.close([1000, 2000, 10_000]);
  });

  it('when the database, the queues and every notes secret are taken, then no uuid or link is found and no sealed command opens', async () => {
    const { MAIL_KEYS: _legacy, MAIL_PRIVATE_KEYS: _private, ...shared } = broker.env({ SMTP_URL: sink.url });
    const notesSecrets = {
      MASTER_KEYS: `k2:${key()},k1:${key()}`,
      LOOKUP_KEY: key(),
      MAIL_PUBLIC_KEYS: publicRingOf(broker.privateRing).serialize(),
    };
    const notesEnv: Record<string, string> = { ...shared, ...notesSecrets, DATABASE_URL: `sqlite:${join(broker.dataDir, 'notes.db')}` };
    const uuids: string[] = [];
    const create = async (port: number, to: string) => {
      const res = await fetch(`http://127.0.0.1:${port}/api/create.php`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'the vault code', send_link_email: to }),
      });
      expect(res.status).toBe(200);
      uuids.push(((await res.json()) as { uuid: string }).uuid);
    };

    // 1. A command the mailer dead-letters (550): it waits in the DLQ.
    const mailer = await createMailerService(loadMailerConfig({ ...shared, MAIL_PRIVATE_KEYS: broker.privateRing.serialize() }), { logger: silentLogger });
    await mailer.start();
    await waitFor(async () => (await broker.messagesIn(broker.queue)) >= 0, { description: 'mail queue declared' });
    notes = (await createNotesService(loadNotesConfig(notesEnv), { logger: silentLogger }));
    let { port } = await notes.start();
    sink.failNext(1, 550);
    await create(port, 'dead@example.com');
    await waitFor(async () => ((await broker.messagesIn(dlqName(broker.queue))) === 1 ? true : undefined), { timeoutMs: 30_000 });
    await mailer.stop();

    // 2. A command relayed and queued (no mailer running), its outbox row deleted after the confirm.
    await create(port, 'queued@example.com');
    await waitFor(async () => ((await broker.messagesIn(broker.queue)) === 1 ? true : undefined), { timeoutMs: 30_000 });
    await waitFor(async () => ((await notes!.outbox.backlog()).count === 0 ? true : undefined));
    await notes.stop();

    // 3. A command still in the outbox (a notes service that relays nothing).
    const { AMQP_URL: _amqp, ...offline } = notesEnv;
    notes = await createNotesService(loadNotesConfig(offline), { logger: silentLogger });
    ({ port } = await notes.start());
    await create(port, 'outbox@example.com');
    expect((await notes.outbox.backlog()).count).toBe(2); // its note.created event and its mail command
    await notes.stop();
    notes = undefined;

    // What an attacker takes: the database files byte for byte, and every message in every queue.
    const files = readdirSync(broker.dataDir).filter((f) => f.startsWith('notes.db'));
    const taken: Buffer[] = files.map((f) => readFileSync(join(broker.dataDir, f)));
    for (const queue of [broker.queue, dlqName(broker.queue), `${broker.queue}.tap`]) {
      for (let m = await broker.channel.get(queue); m; m = await broker.channel.get(queue)) {
        taken.push(m.content, Buffer.from(JSON.stringify(m.properties)));
      }
    }
    broker.channel.nackAll(true);
    const all = Buffer.concat(taken);
    const text = all.toString('latin1');
    expect(uuids).toHaveLength(3);

    // No uuid or link in the raw bytes (canonical, without dashes, upper case, as raw 16 bytes).
    for (const uuid of uuids) {
      const hex = uuid.replace(/-/g, '');
      for (const form of [uuid, uuid.toUpperCase(), hex, hex.toUpperCase()]) expect(text).not.toContain(form);
      expect(all.includes(Buffer.from(hex, 'hex'))).toBe(false);
    }
    expect(text).not.toContain('vanish.test/');

    // Every sealed mail command found, opened with every notes key every way we know: all fail.
    const sealedCommands = [...new Set([...text.matchAll(/"sealed":"([^"]+)"/g)].map((m) => m[1]!))];
    const mailerOpens = (sealed: string) => {
      try {
        return sealed.startsWith('x25519:')
          ? new ConsumerOpener(broker.privateRing, MAIL_SEAL_PURPOSE).open(sealed)
          : new MessageSealer(broker.ring, MAIL_SEAL_PURPOSE).open(sealed);
      } catch {
        return undefined;
      }
    };
    // Control: the mailer's keys (which notes never holds) open the three commands that were found.
    const opened = sealedCommands.map(mailerOpens).filter((o): o is string => o !== undefined);
    expect(new Set(opened.map((o) => (JSON.parse(o) as { to: string }).to))).toEqual(new Set(['dead@example.com', 'queued@example.com', 'outbox@example.com']));

    // Every key material among the notes secrets, whatever its variable says it is.
    const notesKeys: Buffer[] = Object.values(notesSecrets).flatMap((value) =>
      value.includes(':') ? KeyRing.parse(value).keys.map((k) => k.material) : [Buffer.from(value, 'base64')]);
    expect(notesKeys.length).toBeGreaterThanOrEqual(4);
    let attempts = 0;
    for (const sealed of sealedCommands) {
      const id = sealed.slice(sealed.startsWith('x25519:') ? 'x25519:'.length : 0, sealed.indexOf('.'));
      const body = Buffer.from(sealed.slice(sealed.indexOf('.') + 1), 'base64');
      for (const material of notesKeys) {
        const ring = new KeyRing([{ id, material }]);
        const attemptsHere: Array<() => unknown> = [
          () => new ConsumerOpener(ring, MAIL_SEAL_PURPOSE).open(`x25519:${id}.${body.toString('base64')}`),
          () => new MessageSealer(ring, MAIL_SEAL_PURPOSE).open(`${id}.${body.toString('base64')}`),
          () => new MessageSealer(ring, MAIL_SEAL_PURPOSE).open(`${id}.${body.subarray(32).toString('base64')}`),
          () => aeadOpen(material, body),
          () => aeadOpen(material, body.subarray(32)),
          () => aeadOpen(material, body.subarray(32), Buffer.from(`${MAIL_SEAL_PURPOSE}:${id}`)),
        ];
        for (const attempt of attemptsHere) {
          attempts += 1;
          expect(attempt).toThrow();
        }
      }
    }
    expect(attempts).toBe(sealedCommands.length * notesKeys.length * 6);
  });
});

import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ManualClock, silentLogger } from '@vanish/common';
import { createMailerService, loadMailerConfig, type MailerService } from '@vanish/mailer';
import { waitFor } from '@vanish/testkit/net';
import { ApiChecker, checkApiAnswer } from '@vanish/testkit/openapi';
import { startSmtpSink, type SmtpSink } from '@vanish/testkit/smtp-sink';
import { startReceiver, type Received, type Receiver } from './support/receiver';
import { startWorld, type World } from './support/world';

const HOUR = 3_600_000;
/** What the OpenAPI document's `webhooks` section finds wrong with a delivery as the receiver got it. */
const documented = ApiChecker.fromFile();
const undocumented = (r: Received) => documented.webhookProblems({
  headers: { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature }, body: r.body,
});

jest.setTimeout(120_000);

/**
 * DECISIONS 16 end to end in one process: notes (its clock moved by the test), RabbitMQ, the
 * webhooks service, the mailer and a real SMTP server. The clock is the notes service's own clock
 * port (NotesServiceOverrides.clock), the one its pages, reveals, check-ins and sweeper read.
 */
describe('release from a time and a dead-man\'s switch: held, then opened, the link e-mail and note.released sent once', () => {
  let world: World;
  let receiver: Receiver;
  let sink: SmtpSink;
  let mailer: MailerService;
  const clock = new ManualClock(new Date());

  beforeAll(async () => {
    receiver = await startReceiver();
    sink = await startSmtpSink();
    world = await startWorld({ prefix: 'release', notesClock: clock });
    const env = world.webhooksEnv();
    // The mailer on the same exchange and DATA_DIR (its generated keys are the ones notes seals to).
    mailer = await createMailerService(loadMailerConfig({
      DATA_DIR: env.DATA_DIR!, DATABASE_URL: `sqlite:${env.DATA_DIR}/mailer.db`, AMQP_URL: env.AMQP_URL!, AMQP_EXCHANGE: env.AMQP_EXCHANGE!,
      MAIL_QUEUE: `${env.AMQP_EXCHANGE}.mail`, SMTP_URL: sink.url, PUBLIC_BASE_URL: 'https://vanish.test', PORT: '0', ADMIN_PORT: '0',
      HEARTBEAT_INTERVAL_MS: '60000', LOG_LEVEL: 'silent',
    }), { logger: silentLogger });
    await mailer.start();
  });
  afterAll(async () => {
    await mailer?.stop();
    await world?.close();
    await receiver?.close();
    await sink?.close();
  });

  const base = () => `http://127.0.0.1:${world.notesPort}`;
  const page = async (path: string) => {
    const res = await fetch(`${base()}${path}`);
    return { status: res.status, html: await res.text() };
  };
  /** The receipt page's "I am still here" form, posted as the browser posts it. */
  const checkIn = async (receiptUrl: string) => {
    const id = receiptUrl.split('/r/')[1]!;
    const { html } = await page(`/r/${id}?as=creator`);
    const token = new RegExp(`action="/r/${id}/checkin">\\s*<input type="hidden" name="form_token" value="([^"]+)"`).exec(html)?.[1];
    if (!token) throw new Error('no check-in form on the receipt page');
    const res = await fetch(`${base()}/r/${id}/checkin`, {
      method: 'POST', redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams({ form_token: token }).toString(),
    });
    await res.text();
    return res.status;
  };
  const ofNote = (ref: string) => receiver.received.filter((r) => r.payload.data.note_ref === ref);
  const verified = (secret: string, r: Received) =>
    new Webhook(secret).verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature });
  const rawNote = (ref: string) => world.notes.knex('notes').where({ note_ref: ref }).first();
  /** Before its release nothing a reader does uses a view or counts toward the lock-out. */
  const nothingConsumedWhileHeld = async (uuid: string, ref: string) => {
    const { status, html } = await page(`/${uuid}`);
    expect(status).toBe(200);
    expect(html).toContain('id="note-opens"');
    expect(html).not.toContain('name="form_token"');
    for (const guess of ['wrong 1', 'wrong 2', 'wrong 3', 'wrong 4', 'wrong 5', 'wrong 6', 'right']) {
      expect((await world.notes.notes.reveal(uuid, guess)).outcome).toBe('not_yet');
    }
    expect(await world.reveal(uuid, 'right').catch((err: Error) => err.message)).toBe('no form token on the note page');
    expect(await rawNote(ref)).toMatchObject({ current_views: 0, failed_attempts: 0, attempts_in_flight: 0 });
    const metadata = await (await fetch(`${base()}/api/view/${uuid}.php`)).json() as { note: Record<string, unknown> };
    expect(metadata.note.current_views).toBe(0);
  };

  it('when a note opens at available_from, then it is closed until that exact time, opens at it, and its e-mail and webhook arrive once', async () => {
    const opens = new Date(Math.ceil((clock.now().getTime() + 2 * HOUR) / 1000) * 1000);
    const note = await world.create({
      content: 'for later', passcode: 'right', max_views: 1, available_from: opens.toISOString(), send_link_email: 'later@example.com', webhook_url: receiver.url('/at'),
    }) as Awaited<ReturnType<World['create']>> & { url: string; available_from: string; release_state: string };
    expect(note).toMatchObject({ status: 200, release_state: 'scheduled', available_from: opens.toISOString().slice(0, 19).replace('T', ' ') });
    await nothingConsumedWhileHeld(note.uuid, note.note_ref);
    clock.set(new Date(opens.getTime() - 1));
    expect((await world.notes.notes.reveal(note.uuid, 'right')).outcome).toBe('not_yet');
    await new Promise((resolve) => setTimeout(resolve, 600)); // three sweeps: nothing is announced early
    expect(sink.messages).toHaveLength(0);
    expect(ofNote(note.note_ref)).toHaveLength(0);

    clock.set(opens);
    expect(await world.reveal(note.uuid, 'right')).toBe(200);
    await waitFor(() => ofNote(note.note_ref).length >= 3 && sink.messages.length >= 1, { timeoutMs: 30_000, description: 'release e-mail and webhooks' })
      .catch((err: Error) => { throw new Error(`${err.message}: ${JSON.stringify({ webhooks: ofNote(note.note_ref).map((r) => r.payload.event), mails: sink.messages.map((m) => m.to) })}`); });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const events = ofNote(note.note_ref);
    expect(events.map((r) => r.payload.event).sort()).toEqual(['note.accessed', 'note.destroyed', 'note.released']);
    const released = events.find((r) => r.payload.event === 'note.released')!;
    expect(released.payload.data).toEqual({ note_id: null, note_ref: note.note_ref, access_details: null });
    for (const r of events) {
      expect(verified(note.webhook_secret, r)).toBeTruthy();
      expect(undocumented(r)).toEqual([]);
    }
    const mails = sink.messages.filter((m) => m.to.includes('later@example.com'));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.text).toContain(note.url);
    sink.messages.length = 0;
  });

  it('when a dead-man\'s switch is checked in twice, then it stays held; after a missed check-in it opens, and its e-mail and webhook arrive once', async () => {
    const note = await world.create({
      content: 'if I am gone', release_after_silence_hours: 24, send_link_email: 'heir@example.com', webhook_url: receiver.url('/switch'),
    }) as Awaited<ReturnType<World['create']>> & { url: string; receipt_url: string; release_state: string };
    expect(note).toMatchObject({ status: 200, release_state: 'held' });
    await nothingConsumedWhileHeld(note.uuid, note.note_ref);

    for (let i = 0; i < 2; i += 1) {
      clock.advance(23 * HOUR);
      expect(await checkIn(note.receipt_url)).toBe(303);
      await nothingConsumedWhileHeld(note.uuid, note.note_ref);
    }
    const receipt = await page(`/r/${note.receipt_url.split('/r/')[1]}?as=creator`);
    expect(receipt.html).toContain('data-state="held"');
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(sink.messages).toHaveLength(0);
    expect(ofNote(note.note_ref)).toHaveLength(0);

    clock.advance(24 * HOUR); // the third check-in never came
    await waitFor(() => ofNote(note.note_ref).length >= 1 && sink.messages.length >= 1, { timeoutMs: 30_000, description: 'release e-mail and webhook' });
    await new Promise((resolve) => setTimeout(resolve, 1500)); // more sweeps: nothing is announced twice
    const events = ofNote(note.note_ref);
    expect(events.map((r) => r.payload.event)).toEqual(['note.released']);
    expect(verified(note.webhook_secret, events[0]!)).toBeTruthy();
    expect(() => verified(`whsec_${randomBytes(32).toString('base64')}`, events[0]!)).toThrow();
    const mails = sink.messages.filter((m) => m.to.includes('heir@example.com'));
    expect(mails).toHaveLength(1);
    expect(mails[0]!.parsed.text).toContain(note.url);
    expect(await checkIn(note.receipt_url).catch((err: Error) => err.message)).toBe('no check-in form on the receipt page');
    expect((await page(`/r/${note.receipt_url.split('/r/')[1]}?as=creator`)).html).toContain('data-state="released"');
    // The signed receipt says so too, in the shape the OpenAPI document gives it.
    const path = `/api/receipt/${note.receipt_url.split('/r/')[1]}.php`;
    const res = await fetch(`${base()}${path}`);
    const body = await res.json() as { receipt: { release: Record<string, unknown>; timeline: Array<{ event: string }> } };
    checkApiAnswer({ method: 'GET', path, status: res.status, headers: res.headers, body });
    expect(body.receipt.release).toMatchObject({ kind: 'silence', state: 'released', silence_hours: 24 });
    expect(body.receipt.timeline.map((e) => e.event).filter((event) => event !== 'page_fetch')).toEqual(['created', 'checkin', 'checkin', 'release']);
    expect(await world.reveal(note.uuid, null)).toBe(200);
  });
});

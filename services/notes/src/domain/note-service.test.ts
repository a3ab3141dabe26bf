import { randomBytes } from 'node:crypto';
import {
  KeyRing,
  MAIL_SEAL_PURPOSE,
  ManualClock,
  ConsumerOpener,
  ConsumerSealer,
  publicRingOf,
  NoteNotFoundError,
  ServiceUnavailableError,
  silentLogger,
  type EventName,
  type MailCommand,
} from '@vanish/common';
import { FakeNoteStore } from '../adapters/fakes/fake-note-store';
import { ExpirySweeper } from './expiry-sweeper';
import { NoteCrypto, NoteIntegrityError } from './note-crypto';
import { NoteService } from './note-service';
import type { CreateNoteInput } from './notes';

const HOUR = 3_600_000;

function setup() {
  const store = new FakeNoteStore();
  const clock = new ManualClock(new Date('2026-03-01T10:00:00.000Z'));
  const crypto = new NoteCrypto({ masterKeys: KeyRing.generate('k1'), lookupKey: randomBytes(32), kdf: { N: 1024, r: 8, p: 1 } });
  const mailPrivateKeys = KeyRing.generate('m1');
  const mailSealer = new ConsumerSealer(publicRingOf(mailPrivateKeys), MAIL_SEAL_PURPOSE);
  const mailOpener = new ConsumerOpener(mailPrivateKeys, MAIL_SEAL_PURPOSE);
  const seen: Array<{ event: EventName; data: unknown }> = [];
  const service = new NoteService({
    store, crypto, mailSealer, clock, publicBaseUrl: 'https://notes.example/', retentionHours: 720, logger: silentLogger,
    events: { noteEvent: (event, data) => seen.push({ event, data }) },
  });
  const sweeper = new ExpirySweeper({ store, clock, intervalMs: 1000, logger: silentLogger, batchSize: 2 });
  const mail = () => store.events().filter((e) => e.routingKey === 'mail.send')
    .map((e) => JSON.parse(mailOpener.open(e.body.sealed as string)) as MailCommand);
  const noteEvents = () => store.events().filter((e) => e.routingKey !== 'mail.send');
  return { store, clock, service, sweeper, mail, noteEvents, seen };
}

const input = (over: Partial<CreateNoteInput> = {}): CreateNoteInput => ({
  content: 'hello', expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null, ...over,
});

describe('NoteService', () => {
  it('when a view note is created, then the link is base/uuid, expires_at is the retention deadline and note.created is in the outbox', async () => {
    const { service, store, noteEvents, seen } = setup();
    const created = await service.create(input({ maxViews: 3 }));
    expect(created.url).toBe(`https://notes.example/${created.uuid}`);
    expect(created.expiresAt.toISOString()).toBe('2026-03-31T10:00:00.000Z');
    expect(created).toMatchObject({ maxViews: 3, hasPasscode: false, expiryType: 'view' });
    expect(noteEvents()).toEqual([{ routingKey: 'note.created', body: expect.objectContaining({ event: 'note.created', version: 1, data: { note_id: expect.any(String), expiry_type: 'view' } }) }]);
    const noteId = (noteEvents()[0]!.body.data as { note_id: string }).note_id;
    const row = [...store.notes.values()][0]!;
    expect(noteId).toBe(row.noteRef);
    expect(noteId).not.toContain(created.uuid);
    expect(row.lookup).not.toContain(noteId);
    expect(seen).toEqual([{ event: 'note.created', data: { expiry_type: 'view' } }]);
  });

  it('when a time note asks for 3 views, then its effective max_views is 100 and expires_at is creation + hours', async () => {
    const { service } = setup();
    const created = await service.create(input({ expiryType: 'time', expiryHours: 2, maxViews: 3 }));
    expect(created.maxViews).toBe(100);
    expect(created.expiresAt.toISOString()).toBe('2026-03-01T12:00:00.000Z');
    await expect(service.metadata(created.uuid)).resolves.toMatchObject({ maxViews: 100, currentViews: 0, expiryType: 'time' });
  });

  it('when metadata is read repeatedly, then current_views never changes and no event is written', async () => {
    const { service, store } = setup();
    const { uuid } = await service.create(input({ maxViews: 2 }));
    const before = store.outbox.length;
    for (let i = 0; i < 5; i += 1) await expect(service.metadata(uuid)).resolves.toMatchObject({ currentViews: 0 });
    expect(store.outbox.length).toBe(before);
  });

  it('when an unknown, a malformed or an expired uuid is read, then NoteNotFoundError', async () => {
    const { service, clock } = setup();
    await expect(service.metadata('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NoteNotFoundError);
    await expect(service.metadata('../../etc/passwd')).rejects.toBeInstanceOf(NoteNotFoundError);
    const { uuid } = await service.create(input({ expiryType: 'time', expiryHours: 1 }));
    clock.advance(HOUR);
    await expect(service.metadata(uuid)).rejects.toBeInstanceOf(NoteNotFoundError);
    await expect(service.reveal(uuid, null)).resolves.toEqual({ outcome: 'not_found' });
  });

  it('when a max_views 2 note is revealed twice, then both views show content, the second destroys it, and events say views/was_read', async () => {
    const { service, store, noteEvents } = setup();
    const { uuid } = await service.create(input({ maxViews: 2, content: 'two' }));
    await expect(service.reveal(uuid, null)).resolves.toEqual({ outcome: 'revealed', content: 'two', clientEncrypted: false, currentViews: 1, maxViews: 2, destroyed: false });
    await expect(service.metadata(uuid)).resolves.toMatchObject({ currentViews: 1 });
    await expect(service.reveal(uuid, null)).resolves.toEqual({ outcome: 'revealed', content: 'two', clientEncrypted: false, currentViews: 2, maxViews: 2, destroyed: true });
    expect(store.notes.size).toBe(0);
    await expect(service.metadata(uuid)).rejects.toBeInstanceOf(NoteNotFoundError);
    await expect(service.reveal(uuid, null)).resolves.toEqual({ outcome: 'not_found' });
    expect(noteEvents().map((e) => e.routingKey)).toEqual(['note.created', 'note.accessed', 'note.accessed', 'note.destroyed']);
    expect(noteEvents()[3]!.body.data).toMatchObject({ reason: 'views', was_read: true });
  });

  it('when 20 reveals of a max_views 3 note run at once, then exactly 3 show the content', async () => {
    const { service } = setup();
    const { uuid } = await service.create(input({ maxViews: 3 }));
    const results = await Promise.all(Array.from({ length: 20 }, () => service.reveal(uuid, null)));
    expect(results.filter((r) => r.outcome === 'revealed')).toHaveLength(3);
    expect(results.filter((r) => r.outcome === 'not_found')).toHaveLength(17);
  });

  it('when the passcode is wrong 5 times, then each counts, emits failed_access, and the fifth destroys with reason lockout', async () => {
    const { service, store, noteEvents } = setup();
    const { uuid } = await service.create(input({ passcode: 'right', maxViews: 3 }));
    await service.reveal(uuid, 'right');
    for (let i = 1; i <= 4; i += 1) {
      await expect(service.reveal(uuid, `wrong${i}`)).resolves.toEqual({ outcome: 'wrong_passcode', attemptsLeft: 5 - i, lockedOut: false });
    }
    await expect(service.reveal(uuid, 'wrong5')).resolves.toEqual({ outcome: 'wrong_passcode', attemptsLeft: 0, lockedOut: true });
    expect(store.notes.size).toBe(0);
    await expect(service.reveal(uuid, 'right')).resolves.toEqual({ outcome: 'not_found' });
    const names = noteEvents().map((e) => e.routingKey);
    expect(names.filter((n) => n === 'note.failed_access')).toHaveLength(5);
    expect(noteEvents().at(-1)!.body.data).toMatchObject({ reason: 'lockout', was_read: true });
  });

  it('when no passcode is offered for a protected note, then nothing is counted and the content stays sealed', async () => {
    const { service, store } = setup();
    const { uuid } = await service.create(input({ passcode: 'pw' }));
    const outboxBefore = store.outbox.length;
    await expect(service.reveal(uuid, null)).resolves.toEqual({ outcome: 'wrong_passcode', attemptsLeft: 5, lockedOut: false });
    await expect(service.reveal(uuid, '')).resolves.toMatchObject({ outcome: 'wrong_passcode', attemptsLeft: 5 });
    expect(store.outbox.length).toBe(outboxBefore);
    await expect(service.reveal(uuid, 'pw')).resolves.toMatchObject({ outcome: 'revealed', content: 'hello' });
  });

  it('when the content box was tampered with, then reveal throws, no view and no failure is counted, no event', async () => {
    const { service, store } = setup();
    const { uuid } = await service.create(input({ passcode: 'pw', maxViews: 2 }));
    const row = [...store.notes.values()][0]!;
    row.contentBox = Buffer.from(row.contentBox);
    row.contentBox[row.contentBox.length - 1]! ^= 0xff;
    const outboxBefore = store.outbox.length;
    await expect(service.reveal(uuid, 'pw')).rejects.toBeInstanceOf(NoteIntegrityError);
    await expect(service.metadata(uuid)).resolves.toMatchObject({ currentViews: 0 });
    // The reservation the check took is given back: nothing stays counted.
    expect(store.notes.get(row.lookup)).toMatchObject({ failedAttempts: 0, attemptsInFlight: 0 });
    expect(store.outbox.length).toBe(outboxBefore);
  });

  it('when reserved checks never settled (their replica died), then after the reservation time they count as failed, and five lock the note out', async () => {
    const { service, store, clock, noteEvents } = setup();
    const { uuid } = await service.create(input({ passcode: 'right', maxViews: 2 }));
    const lookup = [...store.notes.values()][0]!.lookup;
    // Two checks reserved and never settled, then three counted failures.
    await store.reserveAttempt(lookup, clock.now(), 5, new Date(clock.now().getTime() + 60_000));
    await store.reserveAttempt(lookup, clock.now(), 5, new Date(clock.now().getTime() + 60_000));
    for (let i = 1; i <= 3; i += 1) await expect(service.reveal(uuid, `wrong${i}`)).resolves.toMatchObject({ outcome: 'wrong_passcode', lockedOut: false });
    await expect(service.reveal(uuid, 'right')).resolves.toEqual({ outcome: 'attempts_busy' });
    clock.advance(60_000);
    // The two dead checks are counted: with the three wrong ones that is five.
    await expect(service.reveal(uuid, 'right')).resolves.toEqual({ outcome: 'not_found' });
    expect(store.notes.size).toBe(0);
    const names = noteEvents().map((e) => e.routingKey);
    expect(names.filter((n) => n === 'note.failed_access')).toHaveLength(5);
    expect(noteEvents().at(-1)!.body.data).toMatchObject({ reason: 'lockout' });
  });

  it('when one reserved check never settled beside four wrong ones, then just after the reservation time it is the fifth failure and no further guess is checked', async () => {
    const { service, store, clock } = setup();
    const { uuid } = await service.create(input({ passcode: 'right', maxViews: 2 }));
    const lookup = [...store.notes.values()][0]!.lookup;
    await store.reserveAttempt(lookup, clock.now(), 5, new Date(clock.now().getTime() + 60_000));
    for (let i = 1; i <= 4; i += 1) await service.reveal(uuid, `wrong${i}`).catch(() => undefined);
    expect(store.notes.get(lookup)).toMatchObject({ failedAttempts: 4, attemptsInFlight: 1 });
    await expect(service.reveal(uuid, 'right')).resolves.toEqual({ outcome: 'attempts_busy' });
    clock.advance(60_001);
    // Counting the dead check makes five: locked out before this guess is checked.
    await expect(service.reveal(uuid, 'right')).resolves.toEqual({ outcome: 'not_found' });
    expect(store.notes.size).toBe(0);
  });

  it('when the right passcode follows four wrong ones, then it reveals and its reserved attempt is given back in the claim', async () => {
    const { service, store } = setup();
    const { uuid } = await service.create(input({ passcode: 'right', maxViews: 2 }));
    for (let i = 1; i <= 4; i += 1) await service.reveal(uuid, `wrong${i}`);
    await expect(service.reveal(uuid, 'right')).resolves.toMatchObject({ outcome: 'revealed', currentViews: 1, destroyed: false });
    expect([...store.notes.values()][0]).toMatchObject({ failedAttempts: 4, attemptsInFlight: 0, currentViews: 1 });
    await expect(service.reveal(uuid, 'wrong5')).resolves.toEqual({ outcome: 'wrong_passcode', attemptsLeft: 0, lockedOut: true });
  });

  it('when every try left is reserved by checks under way, then a further guess is neither checked nor counted (attempts_busy)', async () => {
    const { service, store, clock } = setup();
    const { uuid } = await service.create(input({ passcode: 'right', maxViews: 2 }));
    const row = [...store.notes.values()][0]!;
    row.failedAttempts = 3;
    row.attemptsInFlight = 2;
    row.attemptsReservedUntil = new Date(clock.now().getTime() + 10_000);
    const outboxBefore = store.outbox.length;
    await expect(service.reveal(uuid, 'right')).resolves.toEqual({ outcome: 'attempts_busy' });
    await expect(service.reveal(uuid, 'wrong')).resolves.toEqual({ outcome: 'attempts_busy' });
    expect(store.notes.get(row.lookup)).toMatchObject({ failedAttempts: 3, attemptsInFlight: 2 });
    expect(store.outbox.length).toBe(outboxBefore);
    // The two checks under way settle (here: one is given back); a try is free again.
    store.notes.get(row.lookup)!.attemptsInFlight = 1;
    await expect(service.reveal(uuid, 'right')).resolves.toMatchObject({ outcome: 'revealed' });
  });

  it('when send_link_email and notification_email are set, then sealed mail commands go through the outbox with the link and views left', async () => {
    const { service, mail, store, clock } = setup();
    const created = await service.create(input({ maxViews: 2, sendLinkEmail: 'link@example.com', notificationEmail: 'watch@example.com' }));
    expect(mail()).toEqual([{
      kind: 'link', to: 'link@example.com', link: created.url, expiry_type: 'view',
      expires_at: '2026-03-31 10:00:00', max_views: 2, created_at: '2026-03-01 10:00:00',
    }]);
    // The addresses are never in clear in the store or the outbox.
    const raw = JSON.stringify(store.outbox) + [...store.notes.values()].map((n) => Buffer.concat([n.contentBox, n.emailBox!]).toString('latin1')).join();
    expect(raw).not.toContain('example.com');
    clock.advance(60_000);
    await service.reveal(created.uuid, null);
    await service.reveal(created.uuid, null);
    expect(mail().slice(1)).toEqual([
      { kind: 'notification', to: 'watch@example.com', read_at: '2026-03-01 10:01:00', views_left: 1 },
      { kind: 'notification', to: 'watch@example.com', read_at: '2026-03-01 10:01:00', views_left: 0 },
    ]);
  });

  it('when a page in another language creates the note, then its link e-mail command says that language; English says none', async () => {
    const { service, mail } = setup();
    await service.create(input({ sendLinkEmail: 'link@example.com', lang: 'pt-BR' }));
    await service.create(input({ sendLinkEmail: 'link@example.com', lang: 'en' }));
    await service.create(input({ sendLinkEmail: 'link@example.com' }));
    expect(mail().map((command) => (command as { lang?: string }).lang)).toEqual(['pt-BR', undefined, undefined]);
  });

  it('when a note from a page in another language is read, then the read notification is in that language too; the address stays sealed', async () => {
    const { service, mail, store } = setup();
    const german = await service.create(input({ notificationEmail: 'watch@example.com', lang: 'de', maxViews: 2 }));
    const english = await service.create(input({ notificationEmail: 'watch@example.com', maxViews: 2 }));
    const raw = [...store.notes.values()].map((n) => n.emailBox!.toString('latin1')).join();
    expect(raw).not.toContain('example.com');
    await service.reveal(german.uuid, null);
    await service.reveal(english.uuid, null);
    expect(mail()).toEqual([
      expect.objectContaining({ kind: 'notification', to: 'watch@example.com', lang: 'de' }),
      { kind: 'notification', to: 'watch@example.com', read_at: expect.any(String), views_left: 1 },
    ]);
  });

  it('when a note is taken down, then it is gone with note.destroyed reason takedown, and a second takedown is false', async () => {
    const { service, noteEvents } = setup();
    const { uuid } = await service.create(input());
    await expect(service.takedown(uuid)).resolves.toBe(true);
    await expect(service.takedown(uuid)).resolves.toBe(false);
    await expect(service.metadata(uuid)).rejects.toBeInstanceOf(NoteNotFoundError);
    expect(noteEvents().at(-1)!.body).toMatchObject({ event: 'note.destroyed', data: { reason: 'takedown', was_read: false } });
  });

  it('when content or passcode holds a lone surrogate, then create refuses it instead of replacing it', async () => {
    const { service, store } = setup();
    await expect(service.create(input({ content: 'a\uD800b' }))).rejects.toMatchObject({ code: 'INVALID_CONTENT', parameter: 'content' });
    await expect(service.create(input({ passcode: '\uDC00' }))).rejects.toMatchObject({ code: 'INVALID_PASSCODE', parameter: 'passcode' });
    expect(store.notes.size).toBe(0);
  });

  it('when the transaction fails, then neither the note nor its event is kept', async () => {
    const { service, store } = setup();
    store.failNextTransaction(new Error('disk full'));
    await expect(service.create(input())).rejects.toThrow('disk full');
    expect(store.notes.size).toBe(0);
    expect(store.outbox).toHaveLength(0);
  });

  it('when the database is unavailable, then operations throw ServiceUnavailableError', async () => {
    const { service, store } = setup();
    store.available = false;
    await expect(service.create(input())).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(service.metadata('x')).rejects.toBeInstanceOf(ServiceUnavailableError);
  });
});

describe('ExpirySweeper', () => {
  it('when time and view notes pass their deadlines, then each is purged once with note.expired reason time or retention', async () => {
    const { service, sweeper, store, clock, noteEvents } = setup();
    const timed = await Promise.all([1, 2, 3].map(() => service.create(input({ expiryType: 'both', expiryHours: 1, maxViews: 5 }))));
    await service.reveal(timed[0]!.uuid, null);
    await service.create(input({ expiryType: 'view' }));
    clock.advance(HOUR);
    await expect(sweeper.sweepOnce()).resolves.toBe(3);
    expect(store.notes.size).toBe(1);
    clock.advance(720 * HOUR);
    await expect(sweeper.sweepOnce()).resolves.toBe(1);
    await expect(sweeper.sweepOnce()).resolves.toBe(0);
    const expired = noteEvents().filter((e) => e.routingKey === 'note.expired').map((e) => e.body.data);
    expect(expired).toEqual([
      expect.objectContaining({ reason: 'time', was_read: true }),
      expect.objectContaining({ reason: 'time', was_read: false }),
      expect.objectContaining({ reason: 'time', was_read: false }),
      expect.objectContaining({ reason: 'retention', was_read: false }),
    ]);
  });

  it('when two sweepers run at once, then each note ends with exactly one event', async () => {
    const { service, store, clock, noteEvents } = setup();
    for (let i = 0; i < 5; i += 1) await service.create(input({ expiryType: 'time', expiryHours: 1 }));
    clock.advance(2 * HOUR);
    const a = new ExpirySweeper({ store, clock, intervalMs: 1000, logger: silentLogger, batchSize: 2 });
    const b = new ExpirySweeper({ store, clock, intervalMs: 1000, logger: silentLogger, batchSize: 2 });
    const [na, nb] = await Promise.all([a.sweepOnce(), b.sweepOnce()]);
    expect(na + nb).toBe(5);
    expect(noteEvents().filter((e) => e.routingKey === 'note.expired')).toHaveLength(5);
  });

  it('when started, then it sweeps on its interval until stopped', async () => {
    const { service, store, clock } = setup();
    await service.create(input({ expiryType: 'time', expiryHours: 1 }));
    clock.advance(HOUR);
    const sweeper = new ExpirySweeper({ store, clock, intervalMs: 10, logger: silentLogger });
    sweeper.start();
    const deadline = Date.now() + 5000;
    while (store.notes.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await sweeper.stop();
    expect(store.notes.size).toBe(0);
  });
});

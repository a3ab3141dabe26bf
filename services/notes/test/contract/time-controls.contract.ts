import type { Knex } from 'knex';
import { ManualClock, type Clock, type MailCommand } from '@vanish/common';
import { configureKnex } from '../../src/adapters/db/configure-knex';
import { migrateToLatest } from '../../src/adapters/db/migrate';
import { buildNotes, newKeys, noteInput, outboxEvents } from '../support/notes-harness';
import type { ContractDatabase } from './notes-storage.contract';

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** Each reading is one second after the last: every claim of a burst has its own `now`. */
class SteppingClock implements Clock {
  constructor(private at: number) {}
  now(): Date {
    this.at += 1000;
    return new Date(this.at);
  }
  advance(ms: number): void {
    this.at += ms;
  }
}

/** The link e-mails among the outbox's sealed mail commands that this test's mailer key opens. */
function linkMails(events: ReadonlyArray<{ routingKey: string; body: { sealed?: string } }>, opener: { open(sealed: string): string }, link: string): MailCommand[] {
  const mails: MailCommand[] = [];
  for (const event of events) {
    if (event.routingKey !== 'mail.send') continue;
    try {
      const mail = JSON.parse(opener.open(event.body.sealed!)) as MailCommand;
      if (mail.kind === 'link' && mail.link === link) mails.push(mail);
    } catch {
      // another test's mail, sealed to another key
    }
  }
  return mails;
}

const receiptIdOf = (receiptUrl: string | undefined): string => /\/r\/([A-Za-z0-9_-]{43})$/.exec(receiptUrl ?? '')![1]!;

/**
 * DECISIONS 16 on every database the notes service runs on, through the real knex stores and the
 * real domain: the shrink is decided by the claim's own UPDATE, and nothing consumes or counts
 * anything before a note's release.
 */
export function timeControlsContract(dialect: string, createDatabase: () => Promise<ContractDatabase>, { twoPools = true } = {}): void {
  describe(`the creator's time controls on ${dialect}`, () => {
    let database: ContractDatabase;
    let knex: Knex;
    let otherKnex: Knex;

    beforeAll(async () => {
      database = await createDatabase();
      knex = configureKnex(database.url);
      // A second replica: its own pool on the same database (SQLite, one process's file, shares the first).
      otherKnex = twoPools ? configureKnex(database.url) : knex;
      await migrateToLatest(knex);
    });

    afterAll(async () => {
      if (twoPools) await otherKnex?.destroy();
      await knex?.destroy();
      await database?.drop();
    });

    const rawNote = async (lookup: string) => knex('notes').where({ lookup }).first();

    it('when 20 reveals of a 5-view note with a 10-minute shrink run at once through two replicas, then 5 are shown, the expiry shrank exactly once, to the first view + 10 minutes, and the receipt agrees', async () => {
      const keys = newKeys();
      const clock = new SteppingClock(Date.parse('2026-11-27T10:00:00Z'));
      const replicas = [buildNotes(knex, keys, clock), buildNotes(otherKnex, keys, clock)];
      const created = await replicas[0]!.service.create(noteInput({ maxViews: 5, shrinkAfterFirstViewMinutes: 10 }));
      expect(created.controls).toEqual({ shrinkAfterFirstViewMinutes: 10 });
      const retention = created.expiresAt.getTime();

      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => replicas[i % 2]!.service.reveal(created.uuid, null)));
      expect(results.filter((r) => r.outcome === 'revealed')).toHaveLength(5);
      expect(results.filter((r) => r.outcome === 'not_found')).toHaveLength(15);

      const receipt = (await replicas[0]!.receipts.read(receiptIdOf(created.receiptUrl)))!;
      const shrinks = receipt.timeline.filter((entry) => entry.event === 'shrink');
      expect(shrinks).toHaveLength(1);
      // The claim that made the first view is the one that shrank: its reveal and its shrink share one moment.
      const firstReveal = receipt.timeline.find((entry) => entry.event === 'reveal')!;
      expect(shrinks[0]!.at).toBe(firstReveal.at);
      const expected = Date.parse(`${firstReveal.at.replace(' ', 'T')}Z`) + 10 * MINUTE;
      expect(expected).toBeLessThan(retention);
      const [row] = await knex('receipts').where({ note_ref: receipt.note_ref });
      expect(Number(row.expires_at)).toBe(expected);
      expect(receipt.expires_at).toBe(new Date(expected).toISOString().slice(0, 19).replace('T', ' '));
      expect(receipt.shrink_after_first_view_minutes).toBe(10);
      expect(receipt).toMatchObject({ views_used: 5, status: 'ended', end_reason: 'views' });
    });

    it('when 20 reveals of a 25-view note with a 10-minute shrink run at once, then metadata reports the one shrunk expiry, and the sweeper ends the note on time', async () => {
      const keys = newKeys();
      const clock = new SteppingClock(Date.parse('2026-11-27T11:00:00Z'));
      const replicas = [buildNotes(knex, keys, clock), buildNotes(otherKnex, keys, clock)];
      const created = await replicas[0]!.service.create(noteInput({ maxViews: 25, shrinkAfterFirstViewMinutes: 10 }));
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => replicas[i % 2]!.service.reveal(created.uuid, null)));
      expect(results.filter((r) => r.outcome === 'revealed')).toHaveLength(20);

      const raw = await rawNote(replicas[0]!.crypto.lookup(created.uuid));
      expect(Number(raw.expires_at)).toBe(Number(raw.shrunk_at) + 10 * MINUTE);
      const metadata = await replicas[1]!.service.metadata(created.uuid);
      expect(metadata.currentViews).toBe(20);
      expect(metadata.expiresAt.getTime()).toBe(Number(raw.shrunk_at) + 10 * MINUTE);
      expect(metadata.controls).toEqual({ shrinkAfterFirstViewMinutes: 10 });
      const receipt = (await replicas[0]!.receipts.read(receiptIdOf(created.receiptUrl)))!;
      expect(receipt.timeline.filter((entry) => entry.event === 'shrink')).toHaveLength(1);

      const sweeper = replicas[0]!.sweeper();
      expect(await sweeper.sweepOnce()).toBe(0);
      clock.advance(10 * MINUTE);
      expect(await sweeper.sweepOnce()).toBe(1);
      expect(await rawNote(replicas[0]!.crypto.lookup(created.uuid))).toBeUndefined();
      const ended = (await outboxEvents(knex)).filter((e) => e.routingKey === 'note.expired' && e.body.data.note_id === receipt.note_ref);
      expect(ended.map((e) => e.body.data.reason)).toEqual(['time']);
    });

    it('when the shrink would lengthen the note, then the first view leaves its expiry as it was', async () => {
      const clock = new ManualClock(new Date('2026-11-27T12:00:00Z'));
      const { service, crypto } = buildNotes(knex, newKeys(), clock);
      const created = await service.create(noteInput({ expiryType: 'time', expiryHours: 1, maxViews: 3, shrinkAfterFirstViewMinutes: 120 }));
      await service.reveal(created.uuid, null);
      expect(Number((await rawNote(crypto.lookup(created.uuid))).expires_at)).toBe(created.expiresAt.getTime());
    });

    it('when a note opens at available_from, then before it no request consumes a view or counts a wrong passcode, and at that exact time it opens and announces its release once', async () => {
      const clock = new ManualClock(new Date('2026-11-27T12:00:00Z'));
      const notes = buildNotes(knex, newKeys(), clock);
      const opens = new Date('2026-11-27T15:00:00Z');
      const created = await notes.service.create(noteInput({ maxViews: 2, passcode: 'right', sendLinkEmail: 'reader@example.com', availableFrom: opens }));
      expect(created.controls).toEqual({ availableFrom: opens, releaseState: 'scheduled' });
      // The link e-mail waits for the release.
      expect(linkMails(await outboxEvents(knex), notes.mailOpener, created.url)).toHaveLength(0);
      const lookup = notes.crypto.lookup(created.uuid);

      clock.set(new Date(opens.getTime() - 1));
      for (const passcode of ['wrong', 'wrong', 'wrong', 'wrong', 'wrong', 'wrong', 'right', null]) {
        await expect(notes.service.reveal(created.uuid, passcode)).resolves.toEqual({ outcome: 'not_yet', opensAt: opens });
      }
      // The consuming updates refuse it too, whoever calls them.
      expect(await notes.store.reserveAttempt(lookup, clock.now(), 5, new Date(opens.getTime() + HOUR))).toBe(false);
      expect(await notes.store.transaction((tx) => tx.claimView(lookup, clock.now()))).toBe(false);
      expect(await notes.store.transaction((tx) => tx.countFailedAttempt(lookup, clock.now()))).toBe(false);
      expect(await rawNote(lookup)).toMatchObject({ current_views: 0, failed_attempts: 0, attempts_in_flight: 0, released_at: null });
      await expect(notes.service.metadata(created.uuid)).resolves.toMatchObject({ currentViews: 0, controls: { releaseState: 'scheduled', availableFrom: opens } });
      expect(await notes.sweeper().releaseDue()).toBe(0);

      clock.set(opens);
      await expect(notes.service.metadata(created.uuid)).resolves.toMatchObject({ controls: { releaseState: 'released' } });
      await expect(notes.service.reveal(created.uuid, 'wrong')).resolves.toMatchObject({ outcome: 'wrong_passcode', attemptsLeft: 4 });
      await expect(notes.service.reveal(created.uuid, 'right')).resolves.toMatchObject({ outcome: 'revealed', currentViews: 1 });
      expect(await notes.sweeper().releaseDue()).toBe(0);
      const events = (await outboxEvents(knex)).filter((e) => e.body.data?.note_id === created.noteRef || e.routingKey === 'mail.send');
      const released = events.filter((e) => e.routingKey === 'note.released');
      expect(released).toHaveLength(1);
      expect(linkMails(events, notes.mailOpener, created.url)).toHaveLength(1);
      const receipt = (await notes.receipts.read(receiptIdOf(created.receiptUrl)))!;
      expect(receipt.release).toEqual({ kind: 'at', state: 'released', opens_at: '2026-11-27 15:00:00', silence_hours: null, released_at: '2026-11-27 15:00:00' });
      expect(receipt.timeline.map((e) => e.event).sort()).toEqual(['created', 'release', 'reveal', 'wrong_passcode']);
      expect(receipt.timeline.find((e) => e.event === 'release')!.at).toBe('2026-11-27 15:00:00');
    });

    it('when a dead-man\'s switch is checked in twice, then it stays held; when a check-in is missed, then it opens, and two sweepers announce it once', async () => {
      const clock = new ManualClock(new Date('2026-11-27T12:00:00Z'));
      const notes = buildNotes(knex, newKeys(), clock);
      const created = await notes.service.create(noteInput({ sendLinkEmail: 'heir@example.com', releaseAfterSilenceHours: 24 }));
      const receiptId = receiptIdOf(created.receiptUrl);
      expect(created.controls).toEqual({ releaseAfterSilenceHours: 24, releaseState: 'held' });
      expect((await notes.receipts.read(receiptId))!.release).toMatchObject({ kind: 'silence', state: 'held', opens_at: '2026-11-28 12:00:00' });

      clock.advance(20 * HOUR);
      await expect(notes.receipts.checkIn(receiptId)).resolves.toEqual({ outcome: 'held', opensAt: new Date('2026-11-29T08:00:00Z') });
      clock.advance(20 * HOUR);
      await expect(notes.receipts.checkIn(receiptId)).resolves.toEqual({ outcome: 'held', opensAt: new Date('2026-11-30T04:00:00Z') });
      clock.advance(20 * HOUR);
      await expect(notes.service.reveal(created.uuid, null)).resolves.toEqual({ outcome: 'not_yet', opensAt: null });
      await expect(notes.service.metadata(created.uuid)).resolves.toMatchObject({ controls: { releaseState: 'held', releaseAfterSilenceHours: 24 } });
      expect((await notes.receipts.read(receiptId))!.release).toMatchObject({ state: 'held', opens_at: '2026-11-30 04:00:00' });
      const [a, b] = [notes.sweeper(), buildNotes(otherKnex, notes.keys, clock).sweeper()];
      expect((await Promise.all([a.releaseDue(), b.releaseDue()])).reduce((x, y) => x + y)).toBe(0);

      clock.advance(4 * HOUR); // 2026-11-30 04:00: the check-in due by then was missed
      await expect(notes.receipts.checkIn(receiptId)).resolves.toEqual({ outcome: 'released' });
      expect((await Promise.all([a.releaseDue(), b.releaseDue()])).reduce((x, y) => x + y)).toBe(1);
      expect(await a.releaseDue()).toBe(0);
      const events = await outboxEvents(knex);
      expect(events.filter((e) => e.routingKey === 'note.released' && e.body.data.note_id === created.noteRef)).toHaveLength(1);
      expect(linkMails(events, notes.mailOpener, created.url)).toHaveLength(1);
      const receipt = (await notes.receipts.read(receiptId))!;
      expect(receipt.release).toEqual({ kind: 'silence', state: 'released', opens_at: '2026-11-30 04:00:00', silence_hours: 24, released_at: '2026-11-30 04:00:00' });
      expect(receipt.timeline.map((e) => e.event)).toEqual(['created', 'checkin', 'checkin', 'release']);
      await expect(notes.service.reveal(created.uuid, null)).resolves.toMatchObject({ outcome: 'revealed', destroyed: true });
    });

    it('when a release would come after the note expires, then the creation is refused in the error shape', async () => {
      const { service } = buildNotes(knex, newKeys(), new ManualClock(new Date('2026-11-27T12:00:00Z')));
      await expect(service.create(noteInput({ expiryType: 'time', expiryHours: 2, availableFrom: new Date('2026-11-27T14:00:00Z') })))
        .rejects.toMatchObject({ code: 'INVALID_AVAILABLE_FROM', parameter: 'available_from' });
      await expect(service.create(noteInput({ availableFrom: new Date('2026-11-27T11:59:59Z') }))).rejects.toMatchObject({ code: 'INVALID_AVAILABLE_FROM' });
      await expect(service.create(noteInput({ expiryType: 'both', expiryHours: 24, releaseAfterSilenceHours: 24 })))
        .rejects.toMatchObject({ code: 'INVALID_RELEASE_AFTER_SILENCE', parameter: 'release_after_silence_hours' });
    });
  });
}

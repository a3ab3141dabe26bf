import type { Knex } from 'knex';
import { ManualClock, type MailCommand } from '@vanish/common';
import { configureKnex } from '../../src/adapters/db/configure-knex';
import { migrateToLatest } from '../../src/adapters/db/migrate';
import { verifySignedReceipt } from '../../src/receipts/receipt-signer';
import { buildNotes, newKeys, noteInput, outboxEvents } from '../support/notes-harness';
import type { ContractDatabase } from './notes-storage.contract';

const HOUR = 3_600_000;
const SLACK_PREVIEW = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';

const receiptIdOf = (receiptUrl: string | undefined): string => {
  const match = /\/r\/([A-Za-z0-9_-]{43})$/.exec(receiptUrl ?? '');
  if (!match) throw new Error(`not a receipt url: ${String(receiptUrl)}`);
  return match[1]!;
};

/**
 * Receipts (DECISIONS 12) on every database the notes service runs on, through the real knex
 * stores and the real domain: the timeline is written with the note's changes and survives it.
 */
export function receiptsContract(dialect: string, createDatabase: () => Promise<ContractDatabase>): void {
  describe(`receipts on ${dialect}`, () => {
    let database: ContractDatabase;
    let knex: Knex;

    beforeAll(async () => {
      database = await createDatabase();
      knex = configureKnex(database.url);
      await migrateToLatest(knex);
    });

    afterAll(async () => {
      await knex?.destroy();
      await database?.drop();
    });

    it('when a link preview fetches the page (GET and HEAD), a browser reveals it and it is destroyed, then the receipt lists them in order and its signature verifies, and fails after one changed byte', async () => {
      const notes = buildNotes(knex);
      const created = await notes.service.create(noteInput({ content: 'read me once', maxViews: 1 }));
      expect(created.receiptUrl).toMatch(/^http:\/\/localhost:8080\/r\/[A-Za-z0-9_-]{43}$/);
      const id = receiptIdOf(created.receiptUrl);
      await notes.receipts.notePageFetched(created.uuid, SLACK_PREVIEW); // GET
      await notes.receipts.notePageFetched(created.uuid, SLACK_PREVIEW); // HEAD
      (notes.clock as ManualClock).advance(60_000);
      await notes.receipts.notePageFetched(created.uuid, FIREFOX);
      // Reading the receipt never counts a view.
      await expect(notes.service.metadata(created.uuid)).resolves.toMatchObject({ currentViews: 0 });
      await expect(notes.service.reveal(created.uuid, null)).resolves.toMatchObject({ outcome: 'revealed', destroyed: true });

      const receipt = await notes.receipts.read(id);
      expect(receipt).toMatchObject({ status: 'ended', end_reason: 'views', views_used: 1, views_left: 0, max_views: 1, expiry_type: 'view' });
      expect(receipt!.timeline.map((entry) => [entry.event, 'client' in entry ? entry.client : 'reason' in entry ? entry.reason : null])).toEqual([
        ['created', null],
        ['page_fetch', 'link_preview_bot'],
        ['page_fetch', 'link_preview_bot'],
        ['page_fetch', 'browser'],
        ['reveal', null],
        ['end', 'views'],
      ]);

      const saved = JSON.stringify(await notes.receipts.readSigned(id));
      expect(verifySignedReceipt(JSON.parse(saved), notes.signer.publicJwks)).toEqual({ valid: true, kid: 'r1' });
      const at = saved.indexOf('"reveal"') + 2;
      const tampered = `${saved.slice(0, at)}${String.fromCharCode(saved.charCodeAt(at) ^ 1)}${saved.slice(at + 1)}`;
      expect(tampered).not.toBe(saved);
      expect(verifySignedReceipt(JSON.parse(tampered), notes.signer.publicJwks)).toMatchObject({ valid: false });
    });

    it('when a note with a notification e-mail is read, then the notification (sealed to the mailer) links to the receipt', async () => {
      const notes = buildNotes(knex);
      const created = await notes.service.create(noteInput({ content: 'tell me', maxViews: 2, notificationEmail: 'creator@example.org' }));
      const plain = await notes.service.create(noteInput({ content: 'no mail' }));
      await notes.service.reveal(created.uuid, null);
      await notes.service.reveal(plain.uuid, null);
      const mails = (await outboxEvents(knex)).filter((e) => e.routingKey === 'mail.send').map((e) => JSON.parse(notes.mailOpener.open(e.body.sealed!)) as MailCommand);
      const mine = mails.filter((mail) => mail.to === 'creator@example.org');
      expect(mine.at(-1)).toMatchObject({ kind: 'notification', views_left: 1, receipt_url: created.receiptUrl });
      // Only the note key opens the sealed receipt id: the row holds no receipt id in clear.
      const row = await knex('notes').where({ lookup: notes.crypto.lookup(created.uuid) }).first();
      expect(Buffer.from(row.receipt_box).toString('latin1')).not.toContain(receiptIdOf(created.receiptUrl));
      expect((await knex('notes').where({ lookup: notes.crypto.lookup(plain.uuid) }).first())).toBeUndefined();
    });

    it('when the note page is fetched more than 100 times, then the receipt keeps the first 100 fetches and still records the reveal', async () => {
      const notes = buildNotes(knex);
      const created = await notes.service.create(noteInput({ content: 'popular', maxViews: 1 }));
      for (let i = 0; i < 105; i += 1) await notes.receipts.notePageFetched(created.uuid, SLACK_PREVIEW);
      await notes.service.reveal(created.uuid, null);
      const receipt = (await notes.receipts.read(receiptIdOf(created.receiptUrl)))!;
      expect(receipt.timeline.filter((entry) => entry.event === 'page_fetch')).toHaveLength(100);
      expect(receipt.timeline.slice(-2).map((entry) => entry.event)).toEqual(['reveal', 'end']);
    });

    it('when wrong passcodes are tried until the lock-out, then each appears and the end says lockout', async () => {
      const notes = buildNotes(knex);
      const created = await notes.service.create(noteInput({ content: 'guarded', passcode: 'right one', maxViews: 2 }));
      for (let i = 0; i < 5; i += 1) await notes.service.reveal(created.uuid, `wrong ${i}`);
      const receipt = await notes.receipts.read(receiptIdOf(created.receiptUrl));
      expect(receipt).toMatchObject({ status: 'ended', end_reason: 'lockout', views_used: 0, has_passcode: true });
      expect(receipt!.timeline.map((entry) => entry.event)).toEqual(['created', 'wrong_passcode', 'wrong_passcode', 'wrong_passcode', 'wrong_passcode', 'wrong_passcode', 'end']);
    });

    it('when the creator ends a note from its receipt, then it is gone, note.destroyed says creator, and a second end does nothing', async () => {
      const notes = buildNotes(knex);
      const created = await notes.service.create(noteInput({ content: 'changed my mind', maxViews: 3 }));
      const id = receiptIdOf(created.receiptUrl);
      await expect(notes.receipts.endNow(id)).resolves.toBe('ended');
      await expect(notes.service.reveal(created.uuid, null)).resolves.toEqual({ outcome: 'not_found' });
      await expect(notes.receipts.endNow(id)).resolves.toBe('already_ended');
      await expect(notes.receipts.endNow('x'.repeat(43))).resolves.toBe('not_found');
      const ends = (await outboxEvents(knex)).filter((event) => event.body.event === 'note.destroyed' && event.body.data.reason === 'creator');
      expect(ends).toHaveLength(1);
      expect(ends[0]!.body.data).toMatchObject({ was_read: false });
      const receipt = await notes.receipts.read(id);
      expect(receipt).toMatchObject({ status: 'ended', end_reason: 'creator', views_left: 0 });
      expect(receipt!.timeline.filter((entry) => entry.event === 'end')).toHaveLength(1);
    });

    it('when 20 reveals of a 3-view note race an "end now", then at most 3 get content and the timeline matches exactly what readers got', async () => {
      for (let round = 0; round < 3; round += 1) {
        const notes = buildNotes(knex);
        const created = await notes.service.create(noteInput({ content: 'contested', maxViews: 3 }));
        const id = receiptIdOf(created.receiptUrl);
        const reveals = Array.from({ length: 20 }, () => notes.service.reveal(created.uuid, null));
        const end = notes.receipts.endNow(id);
        const outcomes = await Promise.all(reveals);
        const endOutcome = await end;
        const got = outcomes.filter((outcome) => outcome.outcome === 'revealed').length;
        expect(got).toBeLessThanOrEqual(3);
        const receipt = (await notes.receipts.read(id))!;
        expect(receipt.views_used).toBe(got);
        expect(receipt.timeline.filter((entry) => entry.event === 'reveal')).toHaveLength(got);
        const endEntries = receipt.timeline.filter((entry) => entry.event === 'end');
        expect(endEntries).toHaveLength(1);
        // Nothing is read after the end.
        expect(receipt.timeline.at(-1)!.event).toBe('end');
        expect(endEntries[0]).toMatchObject({ reason: endOutcome === 'ended' ? 'creator' : 'views' });
        if (endOutcome !== 'ended') expect(got).toBe(3);
      }
    });

    it('when the note has ended, then the receipt survives it, and is purged NOTE_RETENTION_HOURS after the end', async () => {
      const clock = new ManualClock(new Date());
      const notes = buildNotes(knex, newKeys(), clock, undefined, 1);
      const created = await notes.service.create(noteInput({ content: 'short-lived', expiryType: 'time', expiryHours: 1, maxViews: 5 }));
      const other = await notes.service.create(noteInput({ content: 'still here', expiryType: 'time', expiryHours: 9 }));
      const id = receiptIdOf(created.receiptUrl);
      await notes.service.reveal(created.uuid, null);
      clock.advance(HOUR + 1);
      // Lapsed but not swept yet: the receipt already says it ended at its expiry.
      expect(await notes.receipts.read(id)).toMatchObject({ status: 'ended', end_reason: 'time', ended_at: created.expiresAt.toISOString().slice(0, 19).replace('T', ' ') });
      expect(await notes.sweeper().sweepOnce()).toBe(1);
      const afterSweep = await notes.receipts.read(id);
      expect(afterSweep).toMatchObject({ status: 'ended', end_reason: 'time', views_used: 1, views_left: 0 });
      expect(afterSweep!.timeline.filter((entry) => entry.event === 'end')).toHaveLength(1);
      // Not yet: the retention counts from the end.
      clock.advance(HOUR - 2);
      await notes.receiptPurger().purgeOnce(); // (older tests' receipts in this database may go)
      expect(await notes.receipts.read(id)).not.toBeNull();
      clock.advance(2);
      expect(await notes.receiptPurger().purgeOnce()).toBeGreaterThanOrEqual(1);
      expect(await notes.receipts.read(id)).toBeNull();
      const ref = afterSweep!.note_ref;
      expect(await knex('receipts').where({ note_ref: ref })).toEqual([]);
      expect(await knex('receipt_events').where({ note_ref: ref })).toEqual([]);
      // A receipt whose end was never recorded (its row removed behind the service's back) still goes,
      // a retention after its note's last deadline.
      const orphan = await notes.service.create(noteInput({ content: 'deleted by hand', expiryType: 'time', expiryHours: 1 }));
      await knex('notes').where({ lookup: notes.crypto.lookup(orphan.uuid) }).delete();
      clock.advance(2 * HOUR);
      await notes.receiptPurger().purgeOnce();
      expect(await notes.receipts.read(receiptIdOf(orphan.receiptUrl))).toBeNull();
      // A receipt whose note still lives is kept.
      expect(await notes.receipts.read(receiptIdOf(other.receiptUrl))).toMatchObject({ status: 'active', views_left: 100 });
    });

    it('when the database and every key are stolen, then the receipt rows name no address, no content, no uuid, no receipt id, no user agent', async () => {
      const notes = buildNotes(knex);
      const secrets: string[] = [];
      for (let i = 0; i < 4; i += 1) {
        const content = `stolen-db-content-${i}-${Math.random().toString(36).slice(2)}`;
        const email = `reader${i}@example.org`;
        const created = await notes.service.create(noteInput({ content, maxViews: 2, passcode: i % 2 ? `pass-${i}-word` : null, notificationEmail: email }));
        const id = receiptIdOf(created.receiptUrl);
        secrets.push(content, email, created.uuid, created.uuid.replace(/-/g, ''), id, notes.crypto.lookup(created.uuid), SLACK_PREVIEW, 'Slackbot', FIREFOX, '127.0.0.1', `pass-${i}-word`);
        await notes.receipts.notePageFetched(created.uuid, SLACK_PREVIEW);
        await notes.receipts.notePageFetched(created.uuid, FIREFOX);
        if (i % 2) await notes.service.reveal(created.uuid, 'not the passcode');
        await notes.service.reveal(created.uuid, i % 2 ? `pass-${i}-word` : null);
        if (i === 3) await notes.receipts.endNow(id);
      }
      const rows = JSON.stringify([...(await knex('receipts').select()), ...(await knex('receipt_events').select())]).toLowerCase();
      expect(rows.length).toBeGreaterThan(200);
      for (const secret of secrets) expect({ secret, found: rows.includes(secret.toLowerCase()) }).toEqual({ secret, found: false });
      // The keyed hash of the receipt id cannot be taken for the id, and no uuid-shaped value is kept.
      expect(rows).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/);
      expect(rows).not.toMatch(/@/);
    });
  });
}

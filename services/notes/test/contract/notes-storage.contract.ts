import * as envelope from '@vanish/envelope';
import { createHash, hkdfSync } from 'node:crypto';
import type { Knex } from 'knex';
import { KeyRing, ManualClock, NoteNotFoundError, aeadOpen, type MailCommand } from '@vanish/common';
import { configureKnex } from '../../src/adapters/db/configure-knex';
import { KnexOutboxStore } from '../../src/adapters/db/knex-outbox-store';
import { MIGRATION_NAMES, migrateToLatest, rollbackAll } from '../../src/adapters/db/migrate';
import { NoteIntegrityError, associatedData } from '../../src/domain/note-crypto';
import { PasscodeChecks, buildNotes, newKeys, noteInput, outboxEvents } from '../support/notes-harness';

const HOUR = 3_600_000;

export interface ContractDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * One suite for every database the notes service runs on (STYLE H4): the same expectations
 * against SQLite and MariaDB, through the real knex stores and the real domain.
 */
export function notesStorageContract(dialect: string, createDatabase: () => Promise<ContractDatabase>): void {
  describe(`notes storage on ${dialect}`, () => {
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

    beforeEach(async () => {
      await knex('notes').delete();
      await knex('outbox').delete();
    });

    const rawNote = async (lookup: string) => knex('notes').where({ lookup }).first();

    it('when many notes are created at once, then every one is stored with its event', async () => {
      const { service } = buildNotes(knex);
      const created = await Promise.all(Array.from({ length: 40 }, (_, i) => service.create(noteInput({ content: `note ${i}`, maxViews: 2 }))));
      for (const [i, note] of created.entries()) {
        await expect(service.reveal(note.uuid, null)).resolves.toMatchObject({ outcome: 'revealed', content: `note ${i}` });
      }
      const createdEvents = (await outboxEvents(knex)).filter((e) => e.body.event === 'note.created');
      expect(new Set(createdEvents.map((e) => e.body.data.note_id)).size).toBe(40);
    });

    it('when creations reach the store while one is committing, then they share the next transaction (group commit)', async () => {
      const { service, store, crypto, clock } = buildNotes(knex);
      const existing = await service.create(noteInput({ content: 'template' }));
      const record = (await store.findActive(crypto.lookup(existing.uuid), clock.now()))!;
      const noteInserts: string[] = [];
      const onQuery = (query: { sql: string }): void => {
        if (/^insert into [`"]notes[`"]/i.test(query.sql)) noteInserts.push(query.sql);
      };
      knex.on('query', onQuery);
      try {
        const lookups = Array.from({ length: 20 }, (_, i) => i.toString(16).padStart(2, '0').repeat(32));
        await Promise.all(lookups.map((lookup, i) => store.insertNew({ ...record, lookup, noteRef: `${i}`.padEnd(record.noteRef.length, 'r') }, [])));
        for (const lookup of lookups) expect(await rawNote(lookup)).toBeDefined();
      } finally {
        knex.off('query', onQuery);
      }
      // The first goes at once, alone; the other nineteen wait for it and go together.
      expect(noteInserts).toHaveLength(2);
    });

    it('when reads reach the store while one is under way, then the next query answers them all, each by its own clock', async () => {
      const { service, store, crypto, clock } = buildNotes(knex);
      const soon = await service.create(noteInput({ content: 'ends in an hour', expiryType: 'time', expiryHours: 1 }));
      const later = await service.create(noteInput({ content: 'ends in a day', expiryType: 'time', expiryHours: 24 }));
      const noteReads: string[] = [];
      const onQuery = (query: { sql: string }): void => {
        if (/^select .* from [`"]notes[`"]/i.test(query.sql)) noteReads.push(query.sql);
      };
      knex.on('query', onQuery);
      const inTwoHours = new Date(clock.now().getTime() + 2 * HOUR);
      const unknown = 'f'.repeat(64);
      let answers: Array<Awaited<ReturnType<typeof store.findActive>>>;
      try {
        answers = await Promise.all([
          store.findActive(crypto.lookup(soon.uuid), clock.now()),
          ...Array.from({ length: 10 }, () => store.findActive(crypto.lookup(later.uuid), clock.now())),
          store.findActive(crypto.lookup(soon.uuid), clock.now()),
          store.findActive(crypto.lookup(soon.uuid), inTwoHours),
          store.findActive(unknown, clock.now()),
        ]);
      } finally {
        knex.off('query', onQuery);
      }
      // The first goes at once, alone; the other thirteen wait for it and share one query.
      expect(noteReads).toHaveLength(2);
      expect(answers[0]?.lookup).toBe(crypto.lookup(soon.uuid));
      for (const answer of answers.slice(1, 11)) expect(answer?.lookup).toBe(crypto.lookup(later.uuid));
      expect(answers[11]?.lookup).toBe(crypto.lookup(soon.uuid));
      expect(answers[12]).toBeNull(); // expired by that caller's clock
      expect(answers[13]).toBeNull();
      // Each caller has its own record: changing one answer changes no other.
      answers[1]!.contentBox[0] ^= 0xff;
      expect(answers[2]!.contentBox.equals(answers[1]!.contentBox)).toBe(false);
      await expect(service.reveal(later.uuid, null)).resolves.toMatchObject({ outcome: 'revealed', content: 'ends in a day' });
    });

    it('when one creation in a shared transaction cannot be stored, then only that one fails and the others are kept', async () => {
      const { service, store, crypto, clock } = buildNotes(knex);
      const existing = await service.create(noteInput({ content: 'already here' }));
      const record = (await store.findActive(crypto.lookup(existing.uuid), clock.now()))!;
      const fresh = (digit: string) => ({ ...record, lookup: digit.repeat(record.lookup.length), noteRef: digit.repeat(record.noteRef.length) });
      const outcomes = await Promise.allSettled([
        store.insertNew(fresh('a'), []),
        store.insertNew(record, []), // same lookup as the stored note: the database refuses it
        store.insertNew(fresh('b'), []),
        store.insertNew(fresh('c'), []),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      for (const digit of ['a', 'b', 'c']) expect(await rawNote(digit.repeat(record.lookup.length))).toBeDefined();
      expect(await knex('notes').count({ n: '*' })).toEqual([{ n: 4 }]);
    });

    it('when a note is created, then metadata reads it without counting, and reveals count up to max_views then 404', async () => {
      const { service, crypto } = buildNotes(knex);
      const created = await service.create(noteInput({ maxViews: 2, content: 'twice' }));
      for (let i = 0; i < 3; i += 1) {
        await expect(service.metadata(created.uuid)).resolves.toMatchObject({ currentViews: 0, maxViews: 2, expiryType: 'view', hasPasscode: false });
      }
      const meta = await service.metadata(created.uuid);
      expect(meta.expiresAt.getTime()).toBe(created.expiresAt.getTime());
      expect(meta.createdAt.getTime()).toBe(created.createdAt.getTime());
      await expect(service.reveal(created.uuid, null)).resolves.toMatchObject({ outcome: 'revealed', content: 'twice', currentViews: 1, destroyed: false });
      await expect(service.metadata(created.uuid)).resolves.toMatchObject({ currentViews: 1 });
      await expect(service.reveal(created.uuid, null)).resolves.toMatchObject({ outcome: 'revealed', currentViews: 2, destroyed: true });
      await expect(service.metadata(created.uuid)).rejects.toBeInstanceOf(NoteNotFoundError);
      await expect(service.reveal(created.uuid, null)).resolves.toEqual({ outcome: 'not_found' });
      // Destruction erases: the row, its ciphertext and its sealed e-mail are gone.
      expect(await rawNote(crypto.lookup(created.uuid))).toBeUndefined();
      await expect(service.metadata('00000000-0000-4000-8000-000000000000')).rejects.toBeInstanceOf(NoteNotFoundError);
    });

    it('when a note sealed by its writer is stored (DECISIONS 13), then its key check survives the database sealed, and only the right proof claims a view', async () => {
      const { service, crypto } = buildNotes(knex);
      const key = envelope.newKey();
      const [content, keyCheck] = [await envelope.seal('sealed by the writer', key), await envelope.keyCheck(key)];
      const created = await service.create(noteInput({ content, keyCheck, maxViews: 2 }));
      const row = await rawNote(crypto.lookup(created.uuid));
      expect(Buffer.from(row.key_check_box).length).toBe(60);
      expect(Buffer.from(row.key_check_box).includes(Buffer.from(keyCheck, 'base64url'))).toBe(false);
      await expect(service.reveal(created.uuid, null, null)).resolves.toEqual({ outcome: 'key_required' });
      await expect(service.reveal(created.uuid, null, await envelope.keyCheck(envelope.newKey()))).resolves.toEqual({ outcome: 'key_required' });
      await expect(service.metadata(created.uuid)).resolves.toMatchObject({ currentViews: 0, clientEncrypted: true });
      const revealed = await service.reveal(created.uuid, null, keyCheck);
      expect(revealed).toMatchObject({ outcome: 'revealed', clientEncrypted: true, currentViews: 1 });
      await expect(envelope.open((revealed as { content: string }).content, key)).resolves.toBe('sealed by the writer');
    });

    it('when a time note passes expires_at, then it is 404 at once and the sweeper purges it with note.expired reason time', async () => {
      const clock = new ManualClock(new Date('2026-05-01T00:00:00Z'));
      const { service, sweeper, crypto } = buildNotes(knex, newKeys(), clock);
      const timed = await service.create(noteInput({ expiryType: 'time', expiryHours: 1 }));
      const viewOnly = await service.create(noteInput({ expiryType: 'view' }));
      expect(timed.maxViews).toBe(100);
      clock.advance(HOUR);
      await expect(service.metadata(timed.uuid)).rejects.toBeInstanceOf(NoteNotFoundError);
      await expect(service.reveal(timed.uuid, null)).resolves.toEqual({ outcome: 'not_found' });
      await expect(sweeper().sweepOnce()).resolves.toBe(1);
      expect(await rawNote(crypto.lookup(timed.uuid))).toBeUndefined();
      await expect(service.metadata(viewOnly.uuid)).resolves.toMatchObject({ currentViews: 0 });
      clock.advance(720 * HOUR);
      await expect(sweeper().sweepOnce()).resolves.toBe(1);
      const expired = (await outboxEvents(knex)).filter((e) => e.routingKey === 'note.expired').map((e) => e.body.data.reason);
      expect(expired).toEqual(['time', 'retention']);
    });

    it('when the passcode is wrong five times, then the note is destroyed with reason lockout and the right passcode no longer opens it', async () => {
      const { service, crypto } = buildNotes(knex);
      const { uuid } = await service.create(noteInput({ passcode: 'open sesame', maxViews: 5 }));
      expect((await rawNote(crypto.lookup(uuid))).kdf).toBe('scrypt$1024$8$1');
      for (let i = 1; i <= 4; i += 1) {
        await expect(service.reveal(uuid, 'nope')).resolves.toEqual({ outcome: 'wrong_passcode', attemptsLeft: 5 - i, lockedOut: false });
      }
      await expect(service.reveal(uuid, 'nope')).resolves.toEqual({ outcome: 'wrong_passcode', attemptsLeft: 0, lockedOut: true });
      await expect(service.reveal(uuid, 'open sesame')).resolves.toEqual({ outcome: 'not_found' });
      const events = await outboxEvents(knex);
      expect(events.map((e) => e.routingKey)).toEqual(['note.created', ...Array(5).fill('note.failed_access'), 'note.destroyed']);
      expect(events.at(-1)!.body.data).toMatchObject({ reason: 'lockout', was_read: false });
    });

    it('when a passcode note is read with a wrong then the right passcode, then the attempt is stored and the content opens', async () => {
      const { service, crypto } = buildNotes(knex);
      const { uuid } = await service.create(noteInput({ passcode: 'pässcode ✓', notificationEmail: 'p@example.com', maxViews: 2 }));
      await expect(service.metadata(uuid)).resolves.toMatchObject({ hasPasscode: true });
      await expect(service.reveal(uuid, 'Pässcode ✓')).resolves.toMatchObject({ outcome: 'wrong_passcode', attemptsLeft: 4 });
      expect(await rawNote(crypto.lookup(uuid))).toMatchObject({ failed_attempts: 1, current_views: 0 });
      await expect(service.reveal(uuid, 'pässcode ✓')).resolves.toMatchObject({ outcome: 'revealed', content: 'hello', currentViews: 1 });
    });

    it('when 50 wrong passcodes and the right one arrive at once through two replicas, then at most five are checked, the note ends, and the right one after that gets nothing', async () => {
      // A second replica: its own knex pool and stores on the same database, sharing nothing in memory.
      const otherKnex = configureKnex(database.url);
      try {
        const keys = newKeys();
        const checks = new PasscodeChecks();
        const replicas = [buildNotes(knex, keys, undefined, checks), buildNotes(otherKnex, keys, undefined, checks)];
        const { uuid } = await replicas[0]!.service.create(noteInput({ passcode: 'the right one', maxViews: 1, content: 'guarded' }));
        const guesses = Array.from({ length: 51 }, (_, i) => (i === 25 ? 'the right one' : `wrong guess ${i}`));
        const results = await Promise.all(guesses.map((guess, i) => replicas[i % 2]!.service.reveal(uuid, guess)));

        expect(checks.count).toBeLessThanOrEqual(5);
        expect(checks.count).toBeGreaterThanOrEqual(1);
        const revealed = results.filter((r) => r.outcome === 'revealed');
        const wrong = results.filter((r) => r.outcome === 'wrong_passcode');
        expect(revealed.length + wrong.length).toBe(checks.count);
        for (const result of results) expect(['revealed', 'wrong_passcode', 'attempts_busy', 'not_found']).toContain(result.outcome);
        // Ended either way: five wrong ones locked it out, or the right one was checked and read its only view.
        expect(await rawNote(replicas[0]!.crypto.lookup(uuid))).toBeUndefined();
        await expect(replicas[1]!.service.reveal(uuid, 'the right one')).resolves.toEqual({ outcome: 'not_found' });
        const events = await outboxEvents(knex);
        expect(events.filter((e) => e.routingKey === 'note.failed_access')).toHaveLength(wrong.length);
        const ends = events.filter((e) => e.routingKey === 'note.destroyed');
        expect(ends).toHaveLength(1);
        expect(ends[0]!.body.data.reason).toBe(revealed.length === 1 ? 'views' : 'lockout');
        if (revealed.length === 0) expect(wrong).toHaveLength(5);
      } finally {
        await otherKnex.destroy();
      }
    }, 60_000);

    it('when reserved passcode checks never settle (their replica died), then once their reservation time passes they count as failed and lock the note out', async () => {
      const { service, store, crypto, clock } = buildNotes(knex);
      const { uuid } = await service.create(noteInput({ passcode: 'open sesame', maxViews: 2 }));
      const lookup = crypto.lookup(uuid);
      const until = new Date(clock.now().getTime() + 60_000);
      await expect(store.reserveAttempt(lookup, clock.now(), 5, until)).resolves.toBe(true);
      await expect(store.reserveAttempt(lookup, clock.now(), 5, until)).resolves.toBe(true);
      for (let i = 1; i <= 3; i += 1) await expect(service.reveal(uuid, `nope ${i}`)).resolves.toMatchObject({ outcome: 'wrong_passcode' });
      expect(await rawNote(lookup)).toMatchObject({ failed_attempts: 3, attempts_in_flight: 2 });
      await expect(store.reserveAttempt(lookup, clock.now(), 5, until)).resolves.toBe(false);
      await expect(service.reveal(uuid, 'open sesame')).resolves.toEqual({ outcome: 'attempts_busy' });
      (clock as ManualClock).advance(60_000);
      await expect(service.reveal(uuid, 'open sesame')).resolves.toEqual({ outcome: 'not_found' });
      expect(await rawNote(lookup)).toBeUndefined();
      const events = await outboxEvents(knex);
      expect(events.map((e) => e.routingKey)).toEqual(['note.created', ...Array(5).fill('note.failed_access'), 'note.destroyed']);
      expect(events.at(-1)!.body.data).toMatchObject({ reason: 'lockout', was_read: false });
    });

    it('when the right passcode comes after four wrong ones, then it reveals, and its reserved attempt is given back in the view claim', async () => {
      const { service, crypto } = buildNotes(knex);
      const { uuid } = await service.create(noteInput({ passcode: 'open sesame', maxViews: 2 }));
      for (let i = 1; i <= 4; i += 1) await service.reveal(uuid, `nope ${i}`);
      await expect(service.reveal(uuid, 'open sesame')).resolves.toMatchObject({ outcome: 'revealed', currentViews: 1, destroyed: false });
      expect(await rawNote(crypto.lookup(uuid))).toMatchObject({ failed_attempts: 4, attempts_in_flight: 0, current_views: 1 });
      await expect(service.reveal(uuid, 'nope 5')).resolves.toEqual({ outcome: 'wrong_passcode', attemptsLeft: 0, lockedOut: true });
    });

    it('when a note is taken down, then its row is gone and note.destroyed says takedown', async () => {
      const { service, crypto } = buildNotes(knex);
      const { uuid } = await service.create(noteInput({ maxViews: 3 }));
      await service.reveal(uuid, null);
      await expect(service.takedown(uuid)).resolves.toBe(true);
      expect(await rawNote(crypto.lookup(uuid))).toBeUndefined();
      expect((await outboxEvents(knex)).at(-1)).toMatchObject({ routingKey: 'note.destroyed', body: { data: { reason: 'takedown', was_read: true } } });
      await expect(service.takedown(uuid)).resolves.toBe(false);
    });

    it('when notes go through every transition, then the outbox holds exactly one event per transition with an opaque note_id', async () => {
      const { service, crypto, mailOpener } = buildNotes(knex);
      const a = await service.create(noteInput({ maxViews: 2, notificationEmail: 'reader@example.com', sendLinkEmail: 'link@example.com' }));
      const b = await service.create(noteInput({ expiryType: 'both', expiryHours: 2, maxViews: 1 }));
      await service.metadata(a.uuid);
      await service.reveal(a.uuid, null);
      await service.reveal(a.uuid, null);
      await service.reveal(b.uuid, null);
      const events = await outboxEvents(knex);
      expect(events.map((e) => e.routingKey)).toEqual([
        'note.created', 'mail.send', 'note.created',
        'note.accessed', 'mail.send',
        'note.accessed', 'mail.send', 'note.destroyed',
        'note.accessed', 'note.destroyed',
      ]);
      expect(new Set(events.map((e) => e.body.id)).size).toBe(events.length);
      const noteIds = new Set(events.filter((e) => e.routingKey !== 'mail.send').map((e) => e.body.data.note_id as string));
      expect(noteIds.size).toBe(2);
      for (const id of noteIds) {
        expect(id).not.toContain(a.uuid);
        expect(id).not.toBe(crypto.lookup(a.uuid));
        expect(id).not.toBe(crypto.lookup(b.uuid));
      }
      expect(events[2]!.body.data).toEqual({ note_id: expect.any(String), expiry_type: 'both' });
      const mails = events.filter((e) => e.routingKey === 'mail.send').map((e) => JSON.parse(mailOpener.open(e.body.sealed!)) as MailCommand);
      expect(mails.map((m) => [m.kind, m.to])).toEqual([['link', 'link@example.com'], ['notification', 'reader@example.com'], ['notification', 'reader@example.com']]);
      expect(mails[0]).toMatchObject({ link: a.url, max_views: 2 });
    });

    it('when a transaction fails after writing its note and outbox rows, then neither is kept', async () => {
      const { store, crypto, service } = buildNotes(knex);
      const { uuid } = await service.create(noteInput());
      const before = await outboxEvents(knex);
      const lookup = crypto.lookup(uuid);
      await expect(store.transaction(async (tx) => {
        await tx.claimView(lookup, new Date());
        await tx.enqueue([{ id: 'evt-1', routingKey: 'note.accessed', body: '{}' }]);
        throw new Error('boom');
      })).rejects.toThrow('boom');
      // A database error (a duplicate row) rolls back the same way.
      const row = await rawNote(lookup);
      // The outcome, not the error's class, is the point: in full CI runs under heavy load jest twice reported
      // this rejection as "did not throw" (not reproduced alone; cause not found), so the rollback is asserted
      // directly: no commit, and below, nothing of it in the outbox.
      const outcome = await store.transaction(async (tx) => {
        await tx.enqueue([{ id: 'evt-2', routingKey: 'note.created', body: '{}' }]);
        await tx.insert({
          lookup, noteRef: 'x'.repeat(32), keyId: 'k1', salt: row.salt, kdf: null, checkBox: row.check_box, contentBox: row.content_box,
          emailBox: null, hasPasscode: false, expiryType: 'view', maxViews: 1, currentViews: 0, failedAttempts: 0, attemptsInFlight: 0, attemptsReservedUntil: new Date(0),
          createdAt: new Date(), expiresAt: new Date(Date.now() + HOUR),
        });
      }).then(() => 'committed', (err: unknown) => err);
      expect(outcome).not.toBe('committed');
      expect(outcome).toBeDefined();
      expect(await outboxEvents(knex)).toEqual(before);
      await expect(service.metadata(uuid)).resolves.toMatchObject({ currentViews: 0 });
    });

    it('when 50 reveals of a max_views 3 note run at once in one process, then exactly 3 show the content', async () => {
      const { service } = buildNotes(knex);
      const { uuid } = await service.create(noteInput({ maxViews: 3, content: 'three' }));
      const results = await Promise.all(Array.from({ length: 50 }, () => service.reveal(uuid, null)));
      expect(results.filter((r) => r.outcome === 'revealed')).toHaveLength(3);
      expect(results.filter((r) => r.outcome === 'not_found')).toHaveLength(47);
      const events = await outboxEvents(knex);
      expect(events.filter((e) => e.routingKey === 'note.accessed')).toHaveLength(3);
      expect(events.filter((e) => e.routingKey === 'note.destroyed')).toHaveLength(1);
    });

    it('when content holds NUL, RTL override, combining marks and emoji (up to 10,000 of them), then it round-trips byte-identical', async () => {
      const { service } = buildNotes(knex);
      const samples = [
        'a\u0000b\u0000',
        '\u202Egnp.exe\u202C \u200F\u061C',
        'e\u0301 a\u030A\u0323 Z\u0351\u0308\u036D',
        '😀👩‍👩‍👧‍👦🏳️‍🌈 \uFEFF \uD834\uDD1E',
        '😀'.repeat(10_000),
      ];
      for (const content of samples) {
        const { uuid } = await service.create(noteInput({ content, notificationEmail: 'n@example.com' }));
        const result = await service.reveal(uuid, null);
        expect(result.outcome).toBe('revealed');
        if (result.outcome !== 'revealed') continue;
        expect(Buffer.from(result.content, 'utf8').equals(Buffer.from(content, 'utf8'))).toBe(true);
        expect(result.content).toBe(content);
      }
    });

    it('when the raw rows are dumped, then neither uuid nor content nor e-mail appears, and the master key without the uuid opens nothing', async () => {
      const keys = newKeys();
      const { service, crypto } = buildNotes(knex, keys);
      const content = 'dump-canary-content-7f3a';
      const created = await service.create(noteInput({ content, maxViews: 2, notificationEmail: 'canary.reader@example.org', sendLinkEmail: 'canary.link@example.org' }));
      const destroyed = await service.create(noteInput({ content: 'gone-canary', notificationEmail: 'gone@example.org' }));
      await service.reveal(destroyed.uuid, null);

      const dump = [...(await knex('notes').select()), ...(await knex('outbox').select())];
      const texts = dump.flatMap((row: Record<string, unknown>) => Object.values(row).flatMap((value) =>
        Buffer.isBuffer(value) ? [value.toString('latin1'), value.toString('utf8'), value.toString('hex'), value.toString('base64')] : [String(value)]));
      const haystack = texts.join('\n').toLowerCase();
      const uuidHex = created.uuid.replace(/-/g, '');
      for (const needle of [created.uuid, uuidHex, destroyed.uuid, content, 'gone-canary', 'canary.reader', 'canary.link', 'gone@example', 'example.org',
        createHash('sha256').update(created.uuid).digest('hex')]) {
        expect(haystack).not.toContain(needle.toLowerCase());
      }
      expect(await rawNote(crypto.lookup(destroyed.uuid))).toBeUndefined();
      expect(await knex('notes').count({ n: '*' }).first()).toMatchObject({ n: 1 });

      // The master key alone (no uuid) does not open the content, whichever way it is applied.
      const row = await rawNote(crypto.lookup(created.uuid));
      const master = keys.masterKeys.current.material;
      const aad = associatedData('content', row.lookup, row.key_id);
      const withoutUuid = [
        master,
        Buffer.from(hkdfSync('sha256', master, row.salt, 'vanish.note-key.v1', 32)),
        Buffer.from(hkdfSync('sha256', Buffer.concat([master, Buffer.from(row.lookup, 'utf8')]), row.salt, 'vanish.note-key.v1', 32)),
      ];
      for (const key of withoutUuid) expect(() => aeadOpen(key, row.content_box, aad)).toThrow();
      // With the uuid it opens: the test above fails for the right reason.
      await expect(crypto.open(created.uuid, null, {
        lookup: row.lookup, keyId: row.key_id, salt: row.salt, kdf: row.kdf, checkBox: row.check_box, contentBox: row.content_box, emailBox: row.email_box,
      })).resolves.toMatchObject({ note: { content, notificationEmail: 'canary.reader@example.org' } });
      await expect(crypto.open('00000000-0000-4000-8000-000000000000', null, {
        lookup: row.lookup, keyId: row.key_id, salt: row.salt, kdf: row.kdf, checkBox: row.check_box, contentBox: row.content_box, emailBox: row.email_box,
      })).rejects.toBeInstanceOf(NoteIntegrityError);
    });

    it('when a new master key is put first, then old notes still open, new ones use the new key, and the lookup never changes', async () => {
      const keys = newKeys();
      const before = buildNotes(knex, keys);
      const old = await before.service.create(noteInput({ content: 'sealed under k1', maxViews: 2 }));
      const rotatedRing = new KeyRing([KeyRing.generate('k2').current, ...keys.masterKeys.keys]);
      const after = buildNotes(knex, { ...keys, masterKeys: rotatedRing });
      await expect(after.service.metadata(old.uuid)).resolves.toMatchObject({ currentViews: 0 });
      await expect(after.service.reveal(old.uuid, null)).resolves.toMatchObject({ outcome: 'revealed', content: 'sealed under k1' });
      const fresh = await after.service.create(noteInput({ content: 'sealed under k2' }));
      expect((await rawNote(after.crypto.lookup(fresh.uuid))).key_id).toBe('k2');
      expect((await rawNote(after.crypto.lookup(old.uuid))).key_id).toBe('k1');
      // The lookup key is apart from the ring: with k1 dropped the note is still found (but no longer opens).
      const k2Only = buildNotes(knex, { ...keys, masterKeys: new KeyRing([rotatedRing.current]) });
      await expect(k2Only.service.metadata(old.uuid)).resolves.toMatchObject({ currentViews: 1 });
      await expect(k2Only.service.reveal(old.uuid, null)).rejects.toBeInstanceOf(NoteIntegrityError);
      await expect(k2Only.service.reveal(fresh.uuid, null)).resolves.toMatchObject({ content: 'sealed under k2' });
    });

    it('when one ciphertext byte is changed in the database, then reveal throws and current_views and the outbox are unchanged', async () => {
      const { service, crypto } = buildNotes(knex);
      const { uuid } = await service.create(noteInput({ maxViews: 3 }));
      const lookup = crypto.lookup(uuid);
      const box = Buffer.from((await rawNote(lookup)).content_box);
      box[14] = box[14]! ^ 0x01;
      await knex('notes').where({ lookup }).update({ content_box: box });
      const before = await outboxEvents(knex);
      await expect(service.reveal(uuid, null)).rejects.toBeInstanceOf(NoteIntegrityError);
      expect(await rawNote(lookup)).toMatchObject({ current_views: 0, failed_attempts: 0 });
      expect(await outboxEvents(knex)).toEqual(before);
    });

    it('when two sweepers run at once over many expired notes, then each note ends once with one event', async () => {
      const clock = new ManualClock(new Date('2026-06-01T00:00:00Z'));
      const notes = buildNotes(knex, newKeys(), clock);
      for (let i = 0; i < 10; i += 1) await notes.service.create(noteInput({ expiryType: 'time', expiryHours: 1 }));
      clock.advance(2 * HOUR);
      const counts = await Promise.all([notes.sweeper().sweepOnce(), notes.sweeper().sweepOnce()]);
      expect(counts[0] + counts[1]).toBe(10);
      const expired = (await outboxEvents(knex)).filter((e) => e.routingKey === 'note.expired');
      expect(expired).toHaveLength(10);
      expect(new Set(expired.map((e) => e.body.data.note_id)).size).toBe(10);
      expect(await knex('notes').count({ n: '*' }).first()).toMatchObject({ n: 0 });
    });

    it('when two relays claim the outbox at once, then no row is handed to both, leases expire, and published rows are deleted', async () => {
      const clock = new ManualClock(new Date('2026-07-01T00:00:00Z'));
      const { service, outbox } = buildNotes(knex, newKeys(), clock);
      for (let i = 0; i < 6; i += 1) await service.create(noteInput());
      clock.advance(10_000);
      await expect(outbox.backlog()).resolves.toEqual({ count: 6, oldestAgeSeconds: 10 });
      const [first, second] = await Promise.all([outbox.claim(4, 30_000), outbox.claim(4, 30_000)]);
      const rest = await outbox.claim(10, 30_000);
      const seqs = [...first, ...second, ...rest].map((row) => row.seq);
      expect(first.length + second.length).toBeGreaterThanOrEqual(4);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs.length).toBe(6);
      await expect(outbox.claim(10, 30_000)).resolves.toEqual([]);
      clock.advance(30_001);
      const reclaimed = await outbox.claim(10, 30_000);
      expect(reclaimed.map((row) => row.seq).sort((x, y) => x - y)).toEqual([...seqs].sort((x, y) => x - y));
      expect(JSON.parse(reclaimed[0]!.body)).toMatchObject({ event: 'note.created', version: 1 });
      await outbox.markPublished(reclaimed.map((row) => row.seq));
      await expect(outbox.backlog()).resolves.toEqual({ count: 0, oldestAgeSeconds: 0 });
    });

    it('when the outbox grows past the span it counts row by row, then the backlog is its seqs\' span (an upper bound) and the first row\'s age, and exact again once it is short', async () => {
      const clock = new ManualClock(new Date('2026-07-01T00:00:00Z'));
      const { service } = buildNotes(knex, newKeys(), clock);
      for (let i = 0; i < 6; i += 1) {
        await service.create(noteInput());
        clock.advance(1_000);
      }
      clock.advance(4_000); // the first row is 10 s old, the last 5 s
      const seqs = (await knex('outbox').select('seq').orderBy('seq')).map((row: { seq: number | string }) => Number(row.seq));
      expect(seqs).toHaveLength(6);
      const span = seqs[5]! - seqs[0]! + 1; // 6 where the database numbers rows one by one
      const counted = new KnexOutboxStore(knex, clock, { exactBacklogUpTo: span });
      const spanned = new KnexOutboxStore(knex, clock, { exactBacklogUpTo: span - 1 });
      await expect(counted.backlog()).resolves.toEqual({ count: 6, oldestAgeSeconds: 10 });
      await expect(spanned.backlog()).resolves.toEqual({ count: span, oldestAgeSeconds: 10 });
      // A row in the middle published first (another relay): the span still says as much, the count 5.
      await counted.markPublished([seqs[2]!]);
      await expect(counted.backlog()).resolves.toEqual({ count: 5, oldestAgeSeconds: 10 });
      await expect(spanned.backlog()).resolves.toEqual({ count: span, oldestAgeSeconds: 10 });
      // The oldest published: the span from the next row is short enough to count again; its age is the oldest.
      await counted.markPublished([seqs[0]!]);
      await expect(spanned.backlog()).resolves.toEqual({ count: 4, oldestAgeSeconds: 9 });
      await counted.markPublished(seqs.slice(1));
      await expect(spanned.backlog()).resolves.toEqual({ count: 0, oldestAgeSeconds: 0 });
    });

    it('when a relay renews its lease, then its rows stay its own past the first lease; a lease run out is not renewed; released rows are claimable at once', async () => {
      const clock = new ManualClock(new Date('2026-07-01T00:00:00Z'));
      const { service, outbox } = buildNotes(knex, newKeys(), clock);
      for (let i = 0; i < 3; i += 1) await service.create(noteInput());
      const held = (await outbox.claim(10, 5_000)).map((row) => row.seq);
      expect(held).toHaveLength(3);
      clock.advance(4_000);
      await expect(outbox.renewLease(held, 5_000)).resolves.toBe(3);
      clock.advance(4_000); // 8 s after the claim: past the first lease, within the renewed one
      await expect(outbox.claim(10, 5_000)).resolves.toEqual([]);
      clock.advance(1_001);
      await expect(outbox.renewLease(held, 5_000)).resolves.toBe(0); // ran out: another relay may hold them now
      const reclaimed = (await outbox.claim(10, 5_000)).map((row) => row.seq);
      expect(reclaimed.sort((x, y) => x - y)).toEqual([...held].sort((x, y) => x - y));
      await outbox.releaseLease(reclaimed);
      await expect(outbox.claim(10, 5_000)).resolves.toHaveLength(3);
    });

    it('when the migrations are rolled back entirely and applied again, then the schema comes back and works', async () => {
      expect(await rollbackAll(knex)).toEqual([...MIGRATION_NAMES].reverse());
      expect(await knex.schema.hasTable('notes')).toBe(false);
      expect(await knex.schema.hasTable('outbox')).toBe(false);
      expect(await migrateToLatest(knex)).toEqual(MIGRATION_NAMES);
      expect(await migrateToLatest(knex)).toEqual([]);
      const { service } = buildNotes(knex);
      const { uuid } = await service.create(noteInput());
      await expect(service.reveal(uuid, null)).resolves.toMatchObject({ outcome: 'revealed' });
    });
  });
}

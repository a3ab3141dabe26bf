import * as envelope from '@vanish/envelope';
import type { MailCommand } from '@vanish/common';
import { createFakeNoteService } from '../adapters/fakes/create-fake-note-service';
import type { CreateNoteInput } from './notes';

// DECISIONS 16 in the domain, on the in-memory store: the order of the checks and of the messages.

const HOUR = 3_600_000;
const input = (over: Partial<CreateNoteInput>): CreateNoteInput => ({
  content: 'x', keyCheck: null, expiryType: 'view', expiryHours: 24, maxViews: 2, passcode: null, notificationEmail: null, sendLinkEmail: null, ...over,
});

describe('the creator\'s time controls (domain)', () => {
  it('when a note sealed by its writer is held, then a reveal answers "not yet" before the key proof is looked at, and nothing changes', async () => {
    const { service, store, clock } = createFakeNoteService();
    const key = envelope.newKey();
    const created = await service.create(input({
      content: await envelope.seal('later', key), keyCheck: await envelope.keyCheck(key), releaseAfterSilenceHours: 1,
    }));
    const before = JSON.stringify([...store.notes.values()]);
    await expect(service.reveal(created.uuid, null, 'A'.repeat(43))).resolves.toEqual({ outcome: 'not_yet', opensAt: null });
    await expect(service.reveal(created.uuid, null, await envelope.keyCheck(key))).resolves.toEqual({ outcome: 'not_yet', opensAt: null });
    expect(JSON.stringify([...store.notes.values()])).toBe(before);
    clock.advance(HOUR);
    await expect(service.reveal(created.uuid, null, 'A'.repeat(43))).resolves.toEqual({ outcome: 'key_required' });
    await expect(service.reveal(created.uuid, null, await envelope.keyCheck(key))).resolves.toMatchObject({ outcome: 'revealed' });
  });

  it('when a due release is first met by a reveal, then note.released and the kept link e-mail are written before note.accessed, once', async () => {
    const { service, store, clock, mailOpener } = createFakeNoteService();
    const created = await service.create(input({ availableFrom: new Date(clock.now().getTime() + HOUR), sendLinkEmail: 'r@example.com' }));
    expect(store.events().map((e) => e.routingKey)).toEqual(['note.created']);
    clock.advance(HOUR);
    await service.reveal(created.uuid, null);
    await service.reveal(created.uuid, null);
    const events = store.events().map((e) => e.routingKey);
    expect(events).toEqual(['note.created', 'note.released', 'mail.send', 'note.accessed', 'note.accessed', 'note.destroyed']);
    const mail = JSON.parse(mailOpener.open(store.events()[2]!.body.sealed as string)) as MailCommand;
    expect(mail).toMatchObject({ kind: 'link', to: 'r@example.com', link: created.url });
  });

  it('when a note with a shrink is read twice, then only the first view shortens it, and never lengthens a shorter expiry', async () => {
    const { service, store, clock, crypto } = createFakeNoteService();
    const created = await service.create(input({ maxViews: 3, shrinkAfterFirstViewMinutes: 30 }));
    clock.advance(HOUR);
    await service.reveal(created.uuid, null);
    const first = clock.now().getTime();
    clock.advance(10 * 60_000);
    await service.reveal(created.uuid, null);
    const note = store.notes.get(crypto.lookup(created.uuid))!;
    expect(note.expiresAt.getTime()).toBe(first + 30 * 60_000);
    expect(note.controls?.shrunkAt?.getTime()).toBe(first);
    expect(store.receipts.get(note.noteRef)!.filter((entry) => entry.kind === 'shrink')).toHaveLength(1);
    const short = await service.create(input({ expiryType: 'time', expiryHours: 1, shrinkAfterFirstViewMinutes: 120 }));
    await service.reveal(short.uuid, null);
    expect(store.notes.get(crypto.lookup(short.uuid))!.expiresAt).toEqual(short.expiresAt);
  });
});

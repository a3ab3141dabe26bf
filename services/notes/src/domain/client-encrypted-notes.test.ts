import * as envelope from '@vanish/envelope';
import { createFakeNoteService } from '../adapters/fakes/create-fake-note-service';
import { validateCreateNote } from './create-note-validator';
import { MAX_FAILED_ATTEMPTS } from './note-service';
import type { CreateNoteInput } from './notes';

// DECISIONS 13: notes sealed on the writer's machine. The service stores the envelope and a sealed proof
// of the fragment key, and claims a view only for a reveal that presents that proof.

async function writerSeals(text: string) {
  const key = envelope.newKey();
  return { key, content: await envelope.seal(text, key), keyCheck: await envelope.keyCheck(key) };
}

const input = (over: Partial<CreateNoteInput>): CreateNoteInput => ({
  content: 'x', keyCheck: null, expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null, ...over,
});

describe('create request with client_encrypted (validator)', () => {
  it('when content is an envelope and key_check is well formed, then the input carries both', async () => {
    const sealed = await writerSeals('hello');
    const parsed = validateCreateNote({ client_encrypted: true, content: sealed.content, key_check: sealed.keyCheck, max_views: 3 });
    expect(parsed).toMatchObject({ content: sealed.content, keyCheck: sealed.keyCheck, maxViews: 3 });
  });

  it('when client_encrypted is absent, null or false, then the request is a 1.2.0 request (text, no key check, key_check ignored)', () => {
    for (const flag of [undefined, null, false]) {
      expect(validateCreateNote({ content: 'plain text', client_encrypted: flag, key_check: 'ignored' })).toMatchObject({ content: 'plain text', keyCheck: null });
    }
  });

  it.each([
    ['plain text', { content: 'the vault code is 4711' }, 'INVALID_CONTENT', 'content'],
    ['blank', { content: '  ' }, 'INVALID_CONTENT', 'content'],
    ['an envelope over 60,000 characters', { content: `vz1.AAAAAAAAAAAAAAAA.${'A'.repeat(60_000)}` }, 'CONTENT_TOO_LONG', 'content'],
    ['no key_check', { key_check: undefined }, 'INVALID_KEY_CHECK', 'key_check'],
    ['a short key_check', { key_check: 'abc' }, 'INVALID_KEY_CHECK', 'key_check'],
    ['a key_check of another type', { key_check: 42 }, 'INVALID_KEY_CHECK', 'key_check'],
    ['client_encrypted as a string', { client_encrypted: 'true' }, 'INVALID_CONTENT', 'client_encrypted'],
  ])('when the request has %s (%j), then 400 %s naming %s', async (_name, over, code, parameter) => {
    const sealed = await writerSeals('hello');
    const body = { client_encrypted: true, content: sealed.content, key_check: sealed.keyCheck, ...over };
    expect(() => validateCreateNote(body)).toThrow(expect.objectContaining({ code, parameter }));
  });
});

describe('NoteService with a note sealed by its writer', () => {
  it('when the reveal presents the right key_check, then one view is claimed and the envelope (not text) comes back', async () => {
    const { service } = createFakeNoteService();
    const sealed = await writerSeals('for your eyes only');
    const created = await service.create(input({ content: sealed.content, keyCheck: sealed.keyCheck, maxViews: 2 }));
    expect(created.url).not.toContain('#');
    expect(await service.metadata(created.uuid)).toMatchObject({ clientEncrypted: true, currentViews: 0 });
    const result = await service.reveal(created.uuid, null, sealed.keyCheck);
    expect(result).toMatchObject({ outcome: 'revealed', clientEncrypted: true, currentViews: 1 });
    if (result.outcome !== 'revealed') throw new Error('not revealed');
    await expect(envelope.open(result.content, sealed.key)).resolves.toBe('for your eyes only');
  });

  it('when the reveal has no key_check or a wrong one, then nothing is consumed and no lock-out is counted, and the right one still works', async () => {
    const { service } = createFakeNoteService();
    const sealed = await writerSeals('secret');
    const other = await writerSeals('other');
    const created = await service.create(input({ content: sealed.content, keyCheck: sealed.keyCheck, passcode: 'pin', maxViews: 1 }));
    for (let i = 0; i < MAX_FAILED_ATTEMPTS + 3; i += 1) {
      // A wrong passcode too: without the key, the passcode is never even tried.
      await expect(service.reveal(created.uuid, 'wrong', i % 2 === 0 ? null : other.keyCheck)).resolves.toEqual({ outcome: 'key_required' });
    }
    expect(await service.metadata(created.uuid)).toMatchObject({ currentViews: 0 });
    await expect(service.reveal(created.uuid, 'pin', sealed.keyCheck)).resolves.toMatchObject({ outcome: 'revealed', destroyed: true });
  });

  it('when a server-encrypted note is revealed, then key_check plays no part and clientEncrypted is false', async () => {
    const { service } = createFakeNoteService();
    const created = await service.create(input({ content: 'text' }));
    await expect(service.reveal(created.uuid, null, 'anything')).resolves.toMatchObject({ outcome: 'revealed', content: 'text', clientEncrypted: false });
  });

  it('when a stored key check is tampered with, then the reveal fails as an integrity error and claims nothing', async () => {
    const { service, store } = createFakeNoteService();
    const sealed = await writerSeals('secret');
    const created = await service.create(input({ content: sealed.content, keyCheck: sealed.keyCheck, maxViews: 3 }));
    const [row] = [...store.notes.values()];
    row!.keyCheckBox![20] ^= 1;
    await expect(service.reveal(created.uuid, null, sealed.keyCheck)).rejects.toThrow();
    row!.keyCheckBox![20] ^= 1;
    expect(await service.metadata(created.uuid)).toMatchObject({ currentViews: 0 });
  });
});

import { hkdfSync, randomBytes } from 'node:crypto';
import { KeyRing, aeadOpen } from '@vanish/common';
import { NoteCrypto, associatedData, NoteIntegrityError, PRODUCTION_SCRYPT_PARAMS, type ScryptParams, type SealedNote } from './note-crypto';

// Cheap parameters for speed; production values are asserted below and are the default.
const TEST_KDF: ScryptParams = { N: 2 ** 10, r: 8, p: 1 };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function makeCrypto(masterKeys = KeyRing.generate('k1'), lookupKey = randomBytes(32)) {
  return new NoteCrypto({ masterKeys, lookupKey, kdf: TEST_KDF });
}

const secrets = { content: 'the secret', passcode: null, notificationEmail: null };

describe('NoteCrypto', () => {
  it('when nothing overrides the KDF, then production scrypt costs are at least N=2^15, r=8, p=1', async () => {
    expect(PRODUCTION_SCRYPT_PARAMS).toEqual({ N: 32768, r: 8, p: 1 });
    expect(Object.isFrozen(PRODUCTION_SCRYPT_PARAMS)).toBe(true);
    const crypto = new NoteCrypto({ masterKeys: KeyRing.generate(), lookupKey: randomBytes(32) });
    const sealed = await crypto.seal(crypto.newUuid(), { ...secrets, passcode: 'pw' });
    expect(sealed.kdf).toBe('scrypt$32768$8$1');
  });

  it('when a note is sealed, then its key is RFC 5869 HKDF-SHA-256 of master key and uuid (the stored format)', async () => {
    // Pins the derivation itself, so that a faster implementation can never change the format.
    const masterKeys = KeyRing.generate('k1');
    const crypto = makeCrypto(masterKeys);
    const uuid = crypto.newUuid();
    const sealed = await crypto.seal(uuid, secrets);
    const ikm = Buffer.concat([masterKeys.current.material, Buffer.from(uuid, 'utf8')]);
    const key = Buffer.from(hkdfSync('sha256', ikm, sealed.salt, 'vanish.note-key.v1', 32));
    expect(aeadOpen(key, sealed.contentBox, associatedData('content', sealed.lookup, 'k1')).toString('utf8')).toBe('the secret');
  });

  it('when a uuid is made, then it is a lowercase RFC 4122 version 4 uuid and fresh each time', () => {
    const crypto = makeCrypto();
    const ids = new Set(Array.from({ length: 100 }, () => crypto.newUuid()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(UUID_V4);
  });

  it('when the same uuid is looked up twice, then the HMAC is stable, 64 hex chars, and not the uuid', () => {
    const crypto = makeCrypto();
    const uuid = crypto.newUuid();
    expect(crypto.lookup(uuid)).toBe(crypto.lookup(uuid));
    expect(crypto.lookup(uuid)).toMatch(/^[0-9a-f]{64}$/);
    expect(crypto.lookup(uuid)).not.toContain(uuid.replace(/-/g, ''));
    expect(makeCrypto().lookup(uuid)).not.toBe(crypto.lookup(uuid));
  });

  it('when sealed without passcode, then opening with the uuid returns content and e-mail byte-identical', async () => {
    const crypto = makeCrypto();
    const uuid = crypto.newUuid();
    const content = 'a\u0000b\u202Ec\u0301 😀 \uD83D\uDC4D\u200D';
    const sealed = await crypto.seal(uuid, { content, passcode: null, notificationEmail: 'a@example.com' });
    expect(sealed.kdf).toBeNull();
    await expect(crypto.open(uuid, null, sealed)).resolves.toEqual({ outcome: 'opened', note: { content, notificationEmail: 'a@example.com' } });
  });

  it('when opened with another uuid, then it is an integrity error (the uuid is part of the key)', async () => {
    const crypto = makeCrypto();
    const sealed = await crypto.seal(crypto.newUuid(), secrets);
    await expect(crypto.open(crypto.newUuid(), null, sealed)).rejects.toBeInstanceOf(NoteIntegrityError);
  });

  it('when a passcode is set, then the right one opens and a wrong or missing one is a wrong passcode', async () => {
    const crypto = makeCrypto();
    const uuid = crypto.newUuid();
    const sealed = await crypto.seal(uuid, { ...secrets, passcode: 'correct horse' });
    expect(sealed.kdf).toBe('scrypt$1024$8$1');
    await expect(crypto.open(uuid, 'correct horse', sealed)).resolves.toMatchObject({ outcome: 'opened' });
    await expect(crypto.open(uuid, 'wrong', sealed)).resolves.toEqual({ outcome: 'wrong_passcode' });
    await expect(crypto.open(uuid, null, sealed)).resolves.toEqual({ outcome: 'wrong_passcode' });
  });

  it('when the check block opens but the content was changed, then it throws an integrity error', async () => {
    const crypto = makeCrypto();
    const uuid = crypto.newUuid();
    const sealed = await crypto.seal(uuid, { ...secrets, passcode: 'pw' });
    const tampered = Buffer.from(sealed.contentBox);
    tampered[20] = tampered[20]! ^ 1;
    await expect(crypto.open(uuid, 'pw', { ...sealed, contentBox: tampered })).rejects.toBeInstanceOf(NoteIntegrityError);
  });

  it('when a sealed field is moved to another row or column, then it does not open', async () => {
    const crypto = makeCrypto();
    const uuid = crypto.newUuid();
    const a = await crypto.seal(uuid, { ...secrets, notificationEmail: 'x@example.com' });
    const b = await crypto.seal(uuid, { ...secrets, content: 'other' });
    // Same uuid and key, but other row salt/lookup: swapping boxes between rows fails.
    await expect(crypto.open(uuid, null, { ...a, contentBox: b.contentBox })).rejects.toBeInstanceOf(NoteIntegrityError);
    // Same row, e-mail box in the content column: the field name in the associated data differs.
    await expect(crypto.open(uuid, null, { ...a, contentBox: a.emailBox! })).rejects.toBeInstanceOf(NoteIntegrityError);
    // A row claiming another lookup: associated data no longer matches. (Both rows share the
    // uuid, so the same lookup; the first hex digit is changed, never kept: a '0' stays a '0'.)
    const otherLookup = (a.lookup.startsWith('0') ? '1' : '0') + a.lookup.slice(1);
    await expect(crypto.open(uuid, null, { ...a, lookup: otherLookup })).rejects.toBeInstanceOf(NoteIntegrityError);
  });

  it('when a new master key is put first, then notes sealed under the old key still open and new ones use the new key', async () => {
    const lookupKey = randomBytes(32);
    const old = KeyRing.generate('k1');
    const before = makeCrypto(old, lookupKey);
    const uuid = before.newUuid();
    const sealed = await before.seal(uuid, secrets);
    const rotated = makeCrypto(new KeyRing([{ id: 'k2', material: randomBytes(32) }, ...old.keys]), lookupKey);
    expect(rotated.lookup(uuid)).toBe(before.lookup(uuid));
    await expect(rotated.open(uuid, null, sealed)).resolves.toMatchObject({ outcome: 'opened', note: { content: 'the secret' } });
    expect((await rotated.seal(rotated.newUuid(), secrets)).keyId).toBe('k2');
  });

  it('when the key named by a row is no longer in the ring, then it is an integrity error', async () => {
    const crypto = makeCrypto(KeyRing.generate('k1'));
    const uuid = crypto.newUuid();
    const sealed: SealedNote = await crypto.seal(uuid, secrets);
    await expect(makeCrypto(KeyRing.generate('k9')).open(uuid, null, sealed)).rejects.toBeInstanceOf(NoteIntegrityError);
  });

  it('when the lookup key is too short, then construction refuses it', () => {
    expect(() => new NoteCrypto({ masterKeys: KeyRing.generate(), lookupKey: randomBytes(16) })).toThrow(/32 bytes/);
  });
});

describe('NoteCrypto.selfTest', () => {
  it('when the key ring works, then the self-test passes', async () => {
    await expect(makeCrypto().selfTest()).resolves.toBe(true);
  });
});

import { hkdfSync, randomBytes } from 'node:crypto';
import { KeyRing, aeadOpen } from '@vanish/common';
import { scrypt as nodeScrypt } from 'node:crypto';
import { ServiceUnavailableError } from '@vanish/common';
import {
  NoteCrypto, associatedData, NoteIntegrityError, PRODUCTION_SCRYPT_PARAMS, SCRYPT_BOUNDS, scryptParamsProblem, type ScryptFunction, type ScryptParams,
  type SealedNote,
} from './note-crypto';
import { DEFAULT_SCRYPT_LIMIT, ScryptLimit } from './scrypt-limit';

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


  it('when a note is sealed with one draw of random bytes, then salt, note_ref, receipt bytes and every box nonce are distinct parts of it', async () => {
    const crypto = makeCrypto();
    const random = crypto.newNoteRandom();
    const sealed = await crypto.seal(crypto.newUuid(), { content: 'c', passcode: null, notificationEmail: 'a@example.org', keyCheck: 'AAAA', receiptId: 'r' }, random);
    expect(sealed.salt.equals(random.salt)).toBe(true);
    expect(random.noteRef).toMatch(/^[0-9a-f]{32}$/);
    expect(random.receiptIdBytes).toHaveLength(32);
    const boxes = [sealed.checkBox, sealed.contentBox, sealed.emailBox!, sealed.keyCheckBox!, sealed.receiptBox!];
    const nonces = boxes.map((box) => box.subarray(0, 12).toString('hex'));
    expect(nonces).toEqual([0, 1, 2, 3, 4].map((i) => random.nonces.subarray(i * 12, (i + 1) * 12).toString('hex')));
    const parts = [random.salt.toString('hex'), random.noteRef, random.receiptIdBytes.toString('hex'), ...nonces];
    expect(new Set(parts).size).toBe(parts.length);
    const next = crypto.newNoteRandom();
    expect(next.salt.equals(random.salt)).toBe(false);
    expect(next.noteRef).not.toBe(random.noteRef);
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

/** node's scrypt, counting calls and the most that ran at once; `hold` keeps each one running until released. */
function countingScrypt(options: { hold?: boolean } = {}) {
  const state = { calls: 0, running: 0, peak: 0, held: [] as Array<() => void> };
  const scrypt: ScryptFunction = async (passcode, salt, params, keyLength) => {
    state.calls += 1;
    state.running += 1;
    state.peak = Math.max(state.peak, state.running);
    try {
      if (options.hold) await new Promise<void>((release) => state.held.push(release));
      return await new Promise<Buffer>((resolve, reject) => {
        nodeScrypt(passcode, salt, keyLength, params, (err, key) => (err ? reject(err) : resolve(key)));
      });
    } finally {
      state.running -= 1;
    }
  };
  const releaseAll = () => state.held.splice(0).forEach((release) => release());
  return { scrypt, state, releaseAll };
}

// A bound in time, not in ticks: the real scrypt behind these checks runs on the thread pool, which a
// loaded machine can hold up far longer than a thousand event-loop turns. 10 s only catches a hang.
const until = async (condition: () => boolean): Promise<void> => {
  const deadline = Date.now() + 10_000;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
  if (!condition()) throw new Error('condition never held');
};

describe('NoteCrypto: what a stored row may ask of scrypt', () => {
  it('when the production and test costs are checked, then both are inside the bounds', () => {
    expect(scryptParamsProblem(PRODUCTION_SCRYPT_PARAMS)).toBeNull();
    expect(scryptParamsProblem(TEST_KDF)).toBeNull();
    expect(scryptParamsProblem({ N: 2 ** 16, r: 8, p: 1 })).toBeNull(); // room to double the cost once
    expect(SCRYPT_BOUNDS.maxMemoryBytes).toBe(64 * 1024 * 1024);
  });

  it.each([
    ['N far above the bound', 'scrypt$1048576$8$1'],
    ['N above the bound', 'scrypt$131072$8$1'],
    ['N not a power of two', 'scrypt$32769$8$1'],
    ['N below the bound', 'scrypt$16$8$1'],
    ['r too large', 'scrypt$32768$64$1'],
    ['memory above 64 MiB', 'scrypt$65536$16$1'],
    ['p too large', 'scrypt$32768$8$16'],
    ['zero r', 'scrypt$32768$0$1'],
    ['a number too long to parse', `scrypt$${'9'.repeat(40)}$8$1`],
    ['another KDF', 'argon2id$1$2$3'],
  ])('when a row asks for %s, then open answers an integrity error (500) without running scrypt', async (_name, kdf) => {
    const counting = countingScrypt();
    const crypto = new NoteCrypto({ masterKeys: KeyRing.generate('k1'), lookupKey: randomBytes(32), kdf: TEST_KDF, scrypt: counting.scrypt });
    const uuid = crypto.newUuid();
    const sealed = await crypto.seal(uuid, { ...secrets, passcode: 'pw' });
    expect(counting.state.calls).toBe(1);
    const error = await crypto.open(uuid, 'pw', { ...sealed, kdf }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(NoteIntegrityError);
    expect((error as NoteIntegrityError).statusCode).toBe(500);
    // What the error handler logs is the cause: the parameters, never the uuid or its lookup.
    const logged = String(((error as NoteIntegrityError).cause as Error).message);
    expect(logged).not.toContain(uuid);
    expect(logged).not.toContain(sealed.lookup);
    expect(counting.state.calls).toBe(1);
  });

  it('when a row carries a salt of another length, then open refuses it before scrypt', async () => {
    const counting = countingScrypt();
    const crypto = new NoteCrypto({ masterKeys: KeyRing.generate('k1'), lookupKey: randomBytes(32), kdf: TEST_KDF, scrypt: counting.scrypt });
    const uuid = crypto.newUuid();
    const sealed = await crypto.seal(uuid, { ...secrets, passcode: 'pw' });
    await expect(crypto.open(uuid, 'pw', { ...sealed, salt: randomBytes(1024 * 1024) })).rejects.toBeInstanceOf(NoteIntegrityError);
    expect(counting.state.calls).toBe(1);
  });

  it('when the service is configured with a cost outside the bounds, then construction refuses it', () => {
    expect(() => new NoteCrypto({ masterKeys: KeyRing.generate(), lookupKey: randomBytes(32), kdf: { N: 2 ** 20, r: 8, p: 1 } })).toThrow(/out of bounds/);
  });
});

describe('NoteCrypto: concurrent scrypt work is capped', () => {
  it('when nothing overrides the cap, then it is 2 running and 32 waiting', () => {
    expect(DEFAULT_SCRYPT_LIMIT).toEqual({ maxConcurrent: 2, maxQueued: 32 });
  });

  it('when 12 passcode checks arrive at once, then at most 2 derivations run at a time and all 12 are answered', async () => {
    const counting = countingScrypt();
    const crypto = new NoteCrypto({
      masterKeys: KeyRing.generate('k1'), lookupKey: randomBytes(32), kdf: TEST_KDF, scrypt: counting.scrypt,
      scryptLimit: new ScryptLimit({ maxConcurrent: 2, maxQueued: 20 }),
    });
    const uuid = crypto.newUuid();
    const sealed = await crypto.seal(uuid, { ...secrets, passcode: 'right' });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => crypto.open(uuid, i === 5 ? 'right' : `wrong ${i}`, sealed)));
    expect(results.filter((r) => r.outcome === 'opened')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'wrong_passcode')).toHaveLength(11);
    expect(counting.state.calls).toBe(13);
    expect(counting.state.peak).toBe(2);
  });

  it('when the running and waiting places are all taken, then one more check is refused at once with 503 and a later one runs', async () => {
    const counting = countingScrypt({ hold: true });
    const limit = new ScryptLimit({ maxConcurrent: 2, maxQueued: 3 });
    const crypto = new NoteCrypto({ masterKeys: KeyRing.generate('k1'), lookupKey: randomBytes(32), kdf: TEST_KDF, scrypt: counting.scrypt, scryptLimit: limit });
    const uuid = crypto.newUuid();
    const sealedPromise = crypto.seal(uuid, { ...secrets, passcode: 'pw' });
    await until(() => counting.state.held.length === 1);
    counting.releaseAll();
    const sealed = await sealedPromise;
    const admitted = Array.from({ length: 5 }, () => crypto.open(uuid, 'wrong', sealed));
    await until(() => counting.state.held.length === 2);
    expect({ running: limit.running, queued: limit.queued }).toEqual({ running: 2, queued: 3 });
    const refused = await crypto.open(uuid, 'pw', sealed).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect((refused as ServiceUnavailableError).headers).toMatchObject({ 'Retry-After': '1' });
    expect(counting.state.calls).toBe(3); // the seal and the two running checks; the refused one never started
    let released = 0;
    while (released < 5) {
      await until(() => counting.state.held.length > 0);
      released += counting.state.held.length;
      counting.releaseAll();
    }
    await expect(Promise.all(admitted)).resolves.toHaveLength(5);
    expect(counting.state.peak).toBe(2);
    const later = crypto.open(uuid, 'pw', sealed);
    await until(() => counting.state.held.length === 1);
    counting.releaseAll();
    await expect(later).resolves.toMatchObject({ outcome: 'opened' });
  });

  it('when every scrypt place is held by passcode checks, then notes without a passcode still open at once', async () => {
    const counting = countingScrypt({ hold: true });
    const crypto = new NoteCrypto({
      masterKeys: KeyRing.generate('k1'), lookupKey: randomBytes(32), kdf: TEST_KDF, scrypt: counting.scrypt,
      scryptLimit: new ScryptLimit({ maxConcurrent: 1, maxQueued: 0 }),
    });
    const plainUuid = crypto.newUuid();
    const plain = await crypto.seal(plainUuid, secrets);
    const guarded = crypto.seal(crypto.newUuid(), { ...secrets, passcode: 'pw' });
    await until(() => counting.state.held.length === 1);
    await expect(crypto.open(plainUuid, null, plain)).resolves.toMatchObject({ outcome: 'opened', note: { content: 'the secret' } });
    await expect(crypto.seal(crypto.newUuid(), { ...secrets, passcode: 'other' })).rejects.toBeInstanceOf(ServiceUnavailableError);
    counting.releaseAll();
    await expect(guarded).resolves.toMatchObject({ kdf: 'scrypt$1024$8$1' });
  });
});

describe('NoteCrypto.selfTest', () => {
  it('when the key ring works, then the self-test passes', async () => {
    await expect(makeCrypto().selfTest()).resolves.toBe(true);
  });
});

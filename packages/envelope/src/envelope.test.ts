import { createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { ENVELOPE_MAX_LENGTH, fromBase64Url, isKeyCheck, keyCheck, newKey, open, parseEnvelope, parseKey, seal, toBase64Url } from '../envelope';

describe('the note envelope (DECISIONS 13)', () => {
  it('when a text is sealed and opened with its key, then the same text comes back, emoji and all', async () => {
    const key = newKey();
    const text = 'the vault code is 4711 🔐\nline two';
    const envelope = await seal(text, key);
    expect(envelope).toMatch(/^vz1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    await expect(open(envelope, key)).resolves.toBe(text);
  });

  it('when an envelope is read by an independent AES-256-GCM (node:crypto), then it is iv.ciphertext‖tag under K', async () => {
    const key = newKey();
    const envelope = await seal('interoperable', key);
    const [, iv, body] = envelope.split('.') as [string, string, string];
    const sealed = Buffer.from(fromBase64Url(body));
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(fromBase64Url(key)), Buffer.from(fromBase64Url(iv)));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    expect(Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString('utf8')).toBe('interoperable');
  });

  it('when the key check is computed, then it is base64url(HMAC-SHA-256(K, "vanish key check v1"))', async () => {
    const raw = randomBytes(32);
    const key = toBase64Url(raw);
    const expected = createHmac('sha256', raw).update('vanish key check v1').digest('base64url');
    await expect(keyCheck(key)).resolves.toBe(expected);
    expect(isKeyCheck(expected)).toBe(true);
  });

  it('when the key is wrong or a byte of the envelope changed, then opening fails', async () => {
    const envelope = await seal('secret', newKey());
    await expect(open(envelope, newKey())).rejects.toThrow();
    const key = newKey();
    const good = await seal('secret', key);
    const body = good.split('.')[2]!;
    const flipped = `${good.slice(0, good.length - body.length)}${body[0] === 'A' ? 'B' : 'A'}${body.slice(1)}`;
    await expect(open(flipped, key)).rejects.toThrow();
  });

  it('when each seal runs, then it uses a fresh IV (the same text twice gives two envelopes)', async () => {
    const key = newKey();
    expect(await seal('same', key)).not.toBe(await seal('same', key));
  });

  it.each([
    ['another version', 'vz2.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAA'],
    ['two parts', 'vz1.AAAAAAAAAAAAAAAA'],
    ['a short IV', 'vz1.AAAA.AAAAAAAAAAAAAAAAAAAAAAAA'],
    ['no ciphertext beyond the tag', 'vz1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAA'],
    ['padding', 'vz1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAA=='],
    ['standard base64 characters', 'vz1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAA+/AAAA'],
    ['plain text', 'the vault code is 4711'],
    ['too long', `vz1.AAAAAAAAAAAAAAAA.${'A'.repeat(ENVELOPE_MAX_LENGTH)}`],
  ])('when the envelope has %s, then it is not well formed', (_name, envelope) => {
    expect(parseEnvelope(envelope)).toBeNull();
  });

  it('when a fragment is not a 32-byte base64url key, then parseKey refuses it', () => {
    expect(parseKey(newKey())).toHaveLength(32);
    expect(parseKey(`#${newKey()}`)).toHaveLength(32);
    expect(parseKey('')).toBeNull();
    expect(parseKey('short')).toBeNull();
    expect(parseKey(`${newKey().slice(0, 42)}+`)).toBeNull();
    expect(isKeyCheck('x'.repeat(42))).toBe(false);
    expect(isKeyCheck(42)).toBe(false);
  });
});

import { createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import vectors from '../test-vectors/file-stream.json';
import verify from '../test-vectors/verify';
import * as fileStream from '../file-stream';
import { newKey, seal as sealText } from '../envelope';

const {
  SEGMENT_BYTES, SEALED_SEGMENT_BYTES, createOpener, createSealer, fileKey, newFileEntry, openNote, openSegment, openTransform,
  plainSize, sealManifest, sealRange, sealSegment, sealTransform, sealedSize, segmentNonce, toBase64Url,
} = fileStream;

const concat = (chunks: Uint8Array[]) => Buffer.concat(chunks.map((chunk) => Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));

async function sealAll(key: string, nonce: string, plain: Uint8Array, piece = 10_000): Promise<Buffer> {
  const sealer = createSealer(key, nonce);
  const out: Uint8Array[] = [];
  for (let at = 0; at < plain.length; at += piece) out.push(...(await sealer.push(plain.subarray(at, at + piece))));
  out.push(...(await sealer.finish()));
  return concat(out);
}

async function openAll(key: string, nonce: string, sealed: Uint8Array, size?: number, piece = 9_999): Promise<Buffer> {
  const opener = createOpener(key, nonce, size);
  const out: Uint8Array[] = [];
  for (let at = 0; at < sealed.length; at += piece) out.push(...(await opener.push(sealed.subarray(at, at + piece))));
  out.push(...(await opener.finish()));
  return concat(out);
}

/** The format read by node:crypto alone: HKDF, then each segment under (counter, last flag). */
function openIndependently(key: string, nonce: string, sealed: Buffer): Buffer {
  const fileKeyRaw = Buffer.from(hkdfSync('sha256', Buffer.from(key, 'base64url'), Buffer.from(nonce, 'base64url'), 'vanish file v1', 32));
  const count = Math.max(1, Math.ceil(sealed.length / SEALED_SEGMENT_BYTES));
  const out: Buffer[] = [];
  for (let i = 0; i < count; i += 1) {
    const segment = sealed.subarray(i * SEALED_SEGMENT_BYTES, (i + 1) * SEALED_SEGMENT_BYTES);
    const iv = Buffer.alloc(12);
    iv.writeUIntBE(i, 5, 6);
    iv[11] = i === count - 1 ? 1 : 0;
    const decipher = createDecipheriv('aes-256-gcm', fileKeyRaw, iv);
    decipher.setAuthTag(segment.subarray(segment.length - 16));
    out.push(decipher.update(segment.subarray(0, segment.length - 16)), decipher.final());
  }
  return Buffer.concat(out);
}

describe('the file format (DECISIONS 14, docs/file-format.md)', () => {
  it('when the published test vectors are checked, then every one holds (the same check the CLI and Chromium run)', async () => {
    await expect(verify(vectors, fileStream)).resolves.toBeGreaterThan(70);
  });

  it.each([0, 1, SEGMENT_BYTES - 1, SEGMENT_BYTES, SEGMENT_BYTES + 1, 3 * SEGMENT_BYTES, 3 * SEGMENT_BYTES + 12_345])(
    'when a file of %i bytes is sealed, then node:crypto opens it as the spec says, and so does the opener',
    async (size) => {
      const key = newKey();
      const nonce = fileStream.newFileNonce();
      const plain = randomBytes(size);
      const sealed = await sealAll(key, nonce, plain);
      expect(sealed.length).toBe(sealedSize(size));
      expect(plainSize(sealed.length)).toBe(size);
      expect(openIndependently(key, nonce, sealed).equals(plain)).toBe(true);
      expect((await openAll(key, nonce, sealed, size)).equals(plain)).toBe(true);
      expect((await openAll(key, nonce, sealed)).equals(plain)).toBe(true);
    },
  );

  it('when a file streams through sealTransform and openTransform (WHATWG streams), then the bytes come back and no chunk exceeds a segment', async () => {
    const key = newKey();
    const nonce = fileStream.newFileNonce();
    const size = 5 * SEGMENT_BYTES + 777;
    const plain = randomBytes(size);
    let sent = 0;
    const source = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= size) { controller.close(); return; }
        const piece = plain.subarray(sent, sent + 30_001);
        sent += piece.length;
        controller.enqueue(new Uint8Array(piece));
      },
    });
    const chunks: Uint8Array[] = [];
    const reader = source.pipeThrough(sealTransform(key, nonce)).pipeThrough(openTransform(key, nonce, size)).getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
    expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThanOrEqual(SEGMENT_BYTES);
    expect(concat(chunks).equals(plain)).toBe(true);
  });

  it('when any range of the sealed stream is made again from the plaintext (a resumed upload), then it is that slice of the stream', async () => {
    const key = newKey();
    const nonce = fileStream.newFileNonce();
    const size = 2 * SEGMENT_BYTES + 100;
    const plain = randomBytes(size);
    const whole = await sealAll(key, nonce, plain);
    const aes = await fileKey(key, nonce);
    const read = (offset: number, length: number) => new Uint8Array(plain.subarray(offset, offset + length));
    for (const [start, end] of [[0, whole.length], [1, 2], [SEALED_SEGMENT_BYTES - 1, SEALED_SEGMENT_BYTES + 1], [70_000, whole.length], [whole.length, whole.length], [100, 65_000]] as const) {
      const parts: Uint8Array[] = [];
      for await (const part of sealRange(aes, size, start, end, read)) parts.push(part);
      expect(concat(parts).equals(whole.subarray(start, end))).toBe(true);
    }
    expect(() => sealRange(aes, size, 0, whole.length + 1, read)).toThrow(/outside/);
    const shrunk = sealRange(aes, size, 0, whole.length, () => new Uint8Array(3));
    await expect(shrunk.next()).rejects.toThrow(/changed while it was being sealed/);
  });

  describe('when a sealed stream was tampered with, it fails to open with a clear message', () => {
    const key = newKey();
    const nonce = fileStream.newFileNonce();
    const size = 3 * SEGMENT_BYTES;
    const plain = randomBytes(size);
    let sealed: Buffer;
    beforeAll(async () => { sealed = await sealAll(key, nonce, plain); });
    const segment = (i: number) => sealed.subarray(i * SEALED_SEGMENT_BYTES, (i + 1) * SEALED_SEGMENT_BYTES);

    it.each([
      ['a flipped bit in segment 1', () => { const copy = Buffer.from(sealed); copy[SEALED_SEGMENT_BYTES + 5]! ^= 0x80; return copy; }, 'SEGMENT_CHANGED', /segment 1 of the file does not open/],
      ['segments 1 and 2 in the wrong order', () => Buffer.concat([segment(0), segment(2), segment(1)]), 'SEGMENT_CHANGED', /segment 1 /],
      ['segment 0 twice (a replay)', () => Buffer.concat([segment(0), segment(0), segment(2)]), 'SEGMENT_CHANGED', /segment 1 /],
      ['the last segment dropped', () => sealed.subarray(0, 2 * SEALED_SEGMENT_BYTES), 'TRUNCATED', /cut short/],
      ['a cut inside the last segment', () => sealed.subarray(0, sealed.length - 1), 'TRUNCATED', /segment 2 .*cut short inside it, or it was changed/],
      ['a copy of a segment added after the last', () => Buffer.concat([sealed, segment(0)]), 'EXTENDED', /past its end/],
    ])('%s', async (_name, make, code, message) => {
      for (const withSize of [true, false]) {
        const error = await openAll(key, nonce, make(), withSize ? size : undefined).then(() => null, (err: Error & { code: string }) => err);
        expect(error).not.toBeNull();
        if (withSize && code === 'TRUNCATED') expect(error!.message).toMatch(/cut short: \d+ of its \d+ sealed bytes arrived/);
        else if (withSize && code === 'EXTENDED') expect(error!.message).toMatch(/more than the \d+ sealed bytes its manifest gives/);
        else expect(error!.message).toMatch(message);
        // Without the size, a cut inside the last segment cannot be told from a change (the message says both).
        expect(error!.code).toBe(!withSize && /inside the last/.test(_name) ? 'SEGMENT_CHANGED' : code);
      }
    });

    it('a stream of another file (another nonce, the same key): SEGMENT_CHANGED at segment 0', async () => {
      const other = await sealAll(key, fileStream.newFileNonce(), plain);
      await expect(openAll(key, nonce, other, size)).rejects.toMatchObject({ code: 'SEGMENT_CHANGED', message: expect.stringMatching(/segment 0 .*belongs to another file/) });
    });

    it('the right stream under another note\'s key: SEGMENT_CHANGED', async () => {
      await expect(openAll(newKey(), nonce, sealed, size)).rejects.toMatchObject({ code: 'SEGMENT_CHANGED' });
    });

    it('an empty last segment after full ones (made to look complete after a cut): MALFORMED', async () => {
      const aes = await fileKey(key, nonce);
      const first = await sealSegment(aes, 0, false, plain.subarray(0, SEGMENT_BYTES));
      const emptyLast = await sealSegment(aes, 1, true, new Uint8Array(0));
      await expect(openAll(key, nonce, concat([first, emptyLast]))).rejects.toMatchObject({ code: 'MALFORMED' });
    });

    it('an opener that failed stays failed', async () => {
      const opener = createOpener(key, nonce, size);
      const copy = Buffer.from(sealed);
      copy[0]! ^= 1;
      await expect(opener.push(copy)).rejects.toMatchObject({ code: 'SEGMENT_CHANGED' });
      await expect(opener.push(new Uint8Array(1))).rejects.toMatchObject({ code: 'SEGMENT_CHANGED' });
      await expect(opener.finish()).rejects.toMatchObject({ code: 'SEGMENT_CHANGED' });
    });
  });

  it('when the segment nonce is built, then it is the 11-byte big-endian counter and the last flag', () => {
    expect(Buffer.from(segmentNonce(0, false)).toString('hex')).toBe('000000000000000000000000');
    expect(Buffer.from(segmentNonce(1, true)).toString('hex')).toBe('000000000000000000000101');
    expect(Buffer.from(segmentNonce(0x010203, false)).toString('hex')).toBe('000000000000000001020300');
    expect(Buffer.from(segmentNonce(2 ** 40 + 5, true)).toString('hex')).toBe('000000000001000000000501');
    expect(() => segmentNonce(-1, false)).toThrow();
  });

  it('when a sealed size is not one any file seals to, then plainSize says so', () => {
    expect(plainSize(15)).toBeNull();
    expect(plainSize(16)).toBe(0);
    expect(plainSize(SEALED_SEGMENT_BYTES)).toBe(SEGMENT_BYTES);
    expect(plainSize(SEALED_SEGMENT_BYTES + 16)).toBeNull(); // an empty segment after a full one
    expect(plainSize(SEALED_SEGMENT_BYTES + 17)).toBe(SEGMENT_BYTES + 1);
    expect(sealedSize(2 ** 30)).toBe(2 ** 30 + 16 * 16_384);
    expect(() => sealedSize(-1)).toThrow();
  });

  it('when openSegment is given a segment at the wrong place, then it answers null (not an exception)', async () => {
    const key = newKey();
    const aes = await fileKey(key, fileStream.newFileNonce());
    const sealed = await sealSegment(aes, 3, false, new Uint8Array([1, 2, 3]));
    expect(await openSegment(aes, 3, false, sealed)).toEqual(new Uint8Array([1, 2, 3]));
    expect(await openSegment(aes, 3, true, sealed)).toBeNull();
    expect(await openSegment(aes, 4, false, sealed)).toBeNull();
    expect(await openSegment(aes, 3, false, new Uint8Array(5))).toBeNull();
  });

  describe('the manifest in the note\'s envelope', () => {
    it('when a note has files, then its vz1 envelope opens to the text and the files; a note without files opens as text', async () => {
      const key = newKey();
      const files = [newFileEntry('kubeconfig', 'application/yaml', 1234), newFileEntry('scan 📄.pdf', '', 0)];
      const envelope = await sealManifest('', files, key);
      expect(envelope).toMatch(/^vz1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
      await expect(openNote(envelope, key)).resolves.toEqual({ text: '', files });
      await expect(openNote(await sealText('just text \u00ff', key), key)).resolves.toEqual({ text: 'just text \u00ff', files: null });
      await expect(openNote(envelope, newKey())).rejects.toThrow();
    });

    it('when the envelope is opened by envelope.js (an older page or CLI), then it fails instead of showing the manifest as text', async () => {
      const { open } = await import('../envelope');
      const key = newKey();
      await expect(open(await sealManifest('t', [newFileEntry('a', '', 1)], key), key)).rejects.toThrow();
    });

    it.each([
      ['another version', { v: 2, text: '', files: [] }],
      ['no files', { v: 1, text: '', files: [] }],
      ['no text field', { v: 1, files: [{ name: 'a', type: '', size: 1, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }] }],
      ['a name with a path is fine, but an empty one is not', { v: 1, text: '', files: [{ name: '', type: '', size: 1, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }] }],
      ['a negative size', { v: 1, text: '', files: [{ name: 'a', type: '', size: -1, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }] }],
      ['a short nonce', { v: 1, text: '', files: [{ name: 'a', type: '', size: 1, nonce: 'AAAA' }] }],
      ['two files under one nonce', { v: 1, text: '', files: [{ name: 'a', type: '', size: 1, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }, { name: 'b', type: '', size: 1, nonce: 'AAAAAAAAAAAAAAAAAAAAAA' }] }],
    ])('when a manifest has %s, then openNote refuses it as MANIFEST', async (_name, manifest) => {
      const key = newKey();
      const raw = Buffer.from(key, 'base64url');
      const iv = randomBytes(12);
      const plain = Buffer.concat([Buffer.from([0xff]), Buffer.from(JSON.stringify(manifest))]);
      const aes = await crypto.subtle.importKey('raw', raw, { name: 'AES-GCM' }, false, ['encrypt']);
      const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, aes, plain));
      await expect(openNote(`vz1.${toBase64Url(iv)}.${toBase64Url(sealed)}`, key)).rejects.toMatchObject({ code: 'MANIFEST' });
    });

    it('when the text and names are too long together for one envelope, then sealManifest says so (TOO_LONG)', async () => {
      const files = Array.from({ length: 20 }, (_, i) => newFileEntry(`${i}${'n'.repeat(250)}`, 'application/octet-stream', 1));
      await expect(sealManifest('🔐'.repeat(10_000), files, newKey())).rejects.toMatchObject({ code: 'TOO_LONG' });
    });

    it('when a name is empty or longer than 255 bytes of UTF-8, then newFileEntry refuses it', () => {
      expect(() => newFileEntry('', '', 1)).toThrow(/1 to 255 bytes/);
      expect(() => newFileEntry('é'.repeat(128), '', 1)).toThrow(/1 to 255 bytes/);
      expect(newFileEntry('é'.repeat(127), '', 1).nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(() => newFileEntry('a', '', 1.5)).toThrow();
    });
  });
});

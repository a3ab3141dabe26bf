'use strict';
/*
 * Writes file-stream.json, the test vectors of docs/file-format.md, from an implementation of the format that
 * shares nothing with file-stream.js: node:crypto's HKDF and AES-256-GCM, the segments cut by hand here. Run it
 * only when the format changes (it never should: a note sealed today must open tomorrow):
 *   node packages/envelope/test-vectors/generate.js > packages/envelope/test-vectors/file-stream.json
 */
const { createCipheriv, createHash, hkdfSync } = require('node:crypto');

const SEGMENT = 65536;
const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i));
const pattern = (length) => Buffer.from(Array.from({ length }, (_, i) => i % 251));
const nonceOf = (seed) => Buffer.from(Array.from({ length: 16 }, (_, i) => (seed * 16 + i) & 0xff));
const b64 = (bytes) => Buffer.from(bytes).toString('base64url');

function fileKey(nonce) {
  return Buffer.from(hkdfSync('sha256', key, nonce, Buffer.from('vanish file v1'), 32));
}

function segmentNonce(index, last) {
  const nonce = Buffer.alloc(12);
  nonce.writeUIntBE(index, 5, 6); // the 11-byte counter's low 6 bytes; the rest stays 0
  nonce[11] = last ? 1 : 0;
  return nonce;
}

function seal(plain, nonce) {
  const k = fileKey(nonce);
  const count = plain.length === 0 ? 1 : Math.ceil(plain.length / SEGMENT);
  const segments = [];
  for (let i = 0; i < count; i += 1) {
    const cipher = createCipheriv('aes-256-gcm', k, segmentNonce(i, i === count - 1));
    const body = Buffer.concat([cipher.update(plain.subarray(i * SEGMENT, (i + 1) * SEGMENT)), cipher.final()]);
    segments.push(Buffer.concat([body, cipher.getAuthTag()]));
  }
  return { sealed: Buffer.concat(segments), tags: segments.map((s) => s.subarray(s.length - 16).toString('hex')) };
}

const streams = [
  { name: 'empty file', nonce: 1, plaintext: Buffer.alloc(0) },
  { name: 'short text', nonce: 2, plaintext: Buffer.from('hello, vanish\n') },
  { name: 'one byte short of a segment', nonce: 3, plaintext: pattern(SEGMENT - 1), pattern: true },
  { name: 'exactly one segment', nonce: 4, plaintext: pattern(SEGMENT), pattern: true },
  { name: 'one byte past a segment', nonce: 5, plaintext: pattern(SEGMENT + 1), pattern: true },
  { name: 'exactly two segments', nonce: 6, plaintext: pattern(2 * SEGMENT), pattern: true },
  { name: 'another file of exactly one segment', nonce: 7, plaintext: pattern(SEGMENT), pattern: true },
].map((stream) => {
  const nonce = nonceOf(stream.nonce);
  const { sealed, tags } = seal(stream.plaintext, nonce);
  return {
    name: stream.name,
    nonce: b64(nonce),
    file_key_hex: fileKey(nonce).toString('hex'),
    plain_size: stream.plaintext.length,
    ...(stream.pattern ? { plaintext_pattern: 'byte i is i % 251' } : { plaintext_hex: stream.plaintext.toString('hex') }),
    sealed_size: sealed.length,
    ...(sealed.length <= 256 ? { sealed_hex: sealed.toString('hex') } : {}),
    sealed_sha256: createHash('sha256').update(sealed).digest('hex'),
    segment_tags_hex: tags,
  };
});

const manifestText = 'the files are attached';
const manifestFiles = [
  { name: 'notes.txt', type: 'text/plain', size: 14, nonce: streams[1].nonce },
  { name: 'paß 🔑.bin', type: '', size: SEGMENT, nonce: streams[3].nonce },
];
const manifestJson = JSON.stringify({ v: 1, text: manifestText, files: manifestFiles });
const manifestPlain = Buffer.concat([Buffer.from([0xff]), Buffer.from(manifestJson, 'utf8')]);
const iv = Buffer.from(Array.from({ length: 12 }, (_, i) => 0xa0 + i));
const cipher = createCipheriv('aes-256-gcm', key, iv);
const manifestSealed = Buffer.concat([cipher.update(manifestPlain), cipher.final(), cipher.getAuthTag()]);

const vectors = {
  description: 'Test vectors of the vanish file format (docs/file-format.md). Made by test-vectors/generate.js with node:crypto; checked by the unit test, the CLI\'s pack check and a Chromium test, each running packages/envelope/file-stream.js.',
  key: b64(key),
  key_hex: key.toString('hex'),
  file_key_info: 'vanish file v1',
  segment_bytes: SEGMENT,
  streams,
  manifest: {
    text: manifestText,
    files: manifestFiles,
    iv: b64(iv),
    plaintext_hex: manifestPlain.toString('hex'),
    envelope: `vz1.${b64(iv)}.${b64(manifestSealed)}`,
  },
  // Each failure: take the sealed bytes of `sealed_from`, change them by `mutation`, open them as the file
  // `opened_as` (its nonce, and its size when `with_size`): the opener must refuse with `code`.
  failures: [
    { name: 'a flipped bit in the only segment', sealed_from: 'short text', opened_as: 'short text', mutation: { op: 'flip', offset: 3 }, code: 'SEGMENT_CHANGED' },
    { name: 'a flipped bit in a tag', sealed_from: 'exactly two segments', opened_as: 'exactly two segments', mutation: { op: 'flip', offset: 65551 }, code: 'SEGMENT_CHANGED' },
    { name: 'a flipped bit in the last segment', sealed_from: 'one byte past a segment', opened_as: 'one byte past a segment', mutation: { op: 'flip', offset: 65552 }, code: 'SEGMENT_CHANGED' },
    { name: 'cut at a segment boundary', sealed_from: 'exactly two segments', opened_as: 'exactly two segments', mutation: { op: 'truncate', length: 65552 }, code: 'TRUNCATED' },
    { name: 'cut at a segment boundary, size unknown', sealed_from: 'exactly two segments', opened_as: 'exactly two segments', without_size: true, mutation: { op: 'truncate', length: 65552 }, code: 'TRUNCATED' },
    { name: 'cut inside a segment', sealed_from: 'exactly two segments', opened_as: 'exactly two segments', mutation: { op: 'truncate', length: 70000 }, code: 'TRUNCATED' },
    { name: 'cut to nothing', sealed_from: 'empty file', opened_as: 'empty file', without_size: true, mutation: { op: 'truncate', length: 0 }, code: 'TRUNCATED' },
    { name: 'cut inside the tag of an empty file', sealed_from: 'empty file', opened_as: 'empty file', without_size: true, mutation: { op: 'truncate', length: 15 }, code: 'TRUNCATED' },
    { name: 'one byte added', sealed_from: 'exactly one segment', opened_as: 'exactly one segment', mutation: { op: 'append_hex', hex: '00' }, code: 'EXTENDED' },
    { name: 'one byte added, size unknown', sealed_from: 'exactly one segment', opened_as: 'exactly one segment', without_size: true, mutation: { op: 'append_hex', hex: '00' }, code: 'EXTENDED' },
    { name: 'segments reordered', sealed_from: 'exactly two segments', opened_as: 'exactly two segments', mutation: { op: 'swap_segments', a: 0, b: 1 }, code: 'SEGMENT_CHANGED' },
    { name: 'a file swapped for another of the same size', sealed_from: 'another file of exactly one segment', opened_as: 'exactly one segment', mutation: { op: 'none' }, code: 'SEGMENT_CHANGED' },
    { name: 'a file swapped for another, size unknown', sealed_from: 'short text', opened_as: 'exactly one segment', without_size: true, mutation: { op: 'none' }, code: 'SEGMENT_CHANGED' },
  ],
};

process.stdout.write(`${JSON.stringify(vectors, null, 2)}\n`);

import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';

const CHUNK = 4 * 2 ** 20;

/**
 * Writes `size` bytes of AES-CTR keystream (no two chunks alike, so nothing compresses or dedupes) to `path`,
 * hashing them as they are written: a 1 GiB file never sits in memory. Resolves with its SHA-256 (hex).
 */
export async function makeRandomFile(path: string, size: number): Promise<string> {
  const keystream = createCipheriv('aes-128-ctr', randomBytes(16), randomBytes(16));
  const out = createWriteStream(path);
  const hash = createHash('sha256');
  const zeros = Buffer.alloc(CHUNK);
  for (let written = 0; written < size; written += zeros.length) {
    const chunk = keystream.update(zeros.subarray(0, Math.min(zeros.length, size - written)));
    hash.update(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return hash.digest('hex');
}

/** The SHA-256 (hex) of a file, read as a stream. */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

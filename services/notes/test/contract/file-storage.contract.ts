import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { DataStore } from '@tus/utils';
import { randomObjectName } from '../../src/files/storage/object-names';
import { StoredObjectNotFoundError, StoredRangeError, type FileStorage, type StoredObject } from '../../src/files/storage/ports';

const MiB = 1024 * 1024;

export interface ContractStorage {
  storage: FileStorage;
  /** What the store holds, looked at in the store itself (the folder, the bucket's files), not through the adapter. */
  contents(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * One suite for both file storage adapters (DECISIONS 14, STYLE H4): the same expectations against
 * the local file system and S3-compatible object storage. Uploads are driven through the adapter's
 * tus DataStore exactly as @tus/server drives it (write(stream, id, offset), getUpload(id)).
 * Sizes straddle S3's 5 MiB part minimum and the 8 MiB part size, so the S3 adapter completes
 * parts, keeps a short tail between requests, and finishes a multipart upload.
 */
export function fileStorageContract(kind: string, open: () => Promise<ContractStorage>): void {
  describe(`file storage on ${kind}`, () => {
    let store: ContractStorage;
    let storage: FileStorage;
    let tus: DataStore;

    beforeAll(async () => {
      store = await open();
      storage = store.storage;
      tus = storage.tusDataStore();
    });

    afterAll(async () => {
      await store?.close();
    });

    afterEach(async () => {
      for await (const object of storage.list()) await storage.delete(object.name);
      await expect(store.contents()).resolves.toEqual([]);
    });

    const listed = async (): Promise<StoredObject[]> => {
      const all: StoredObject[] = [];
      for await (const object of storage.list()) all.push(object);
      return all;
    };

    const uploadInPatches = async (name: string, bytes: Buffer, patchSizes: number[]): Promise<void> => {
      let offset = 0;
      for (const size of patchSizes) {
        const next = await tus.write(Readable.from(chunks(bytes.subarray(offset, offset + size))), name, offset);
        expect(next).toBe(offset + Math.min(size, bytes.length - offset));
        offset = next;
        await expect(tus.getUpload(name)).resolves.toMatchObject({ offset, size: bytes.length });
      }
    };

    it('when an upload is created, then it is stored empty and incomplete, and cannot be read', async () => {
      const name = randomObjectName();
      await storage.createUpload(name, 3 * MiB);
      await expect(storage.stat(name)).resolves.toMatchObject({ name, size: 0, complete: false });
      await expect(tus.getUpload(name)).resolves.toMatchObject({ id: name, offset: 0, size: 3 * MiB });
      expect((await listed()).map((o) => [o.name, o.complete])).toEqual([[name, false]]);
      await expect(storage.read(name)).rejects.toThrow(StoredObjectNotFoundError);
      await expect(storage.read(name)).rejects.toMatchObject({ incomplete: true });
      expect((await store.contents()).length).toBeGreaterThan(0);
    });

    it('when PATCHes write at their offsets up to the declared length, then the object is complete and reads back whole and in ranges', async () => {
      const bytes = pseudoRandom(13 * MiB + 12_345, 1);
      const name = randomObjectName();
      await storage.createUpload(name, bytes.length);
      await uploadInPatches(name, bytes, [3 * MiB, 3 * MiB, 5 * MiB, 3 * MiB]);

      const object = await storage.stat(name);
      expect(object).toMatchObject({ name, size: bytes.length, complete: true });
      expect(object!.modifiedAt.getTime()).toBeGreaterThan(Date.now() - 600_000);
      expect(sha256(await collect(await storage.read(name)))).toBe(sha256(bytes));
      for (const range of [{ start: 0, end: 0 }, { start: 5, end: MiB + 3 }, { start: 8 * MiB - 7, end: 8 * MiB + 7 }, { start: bytes.length - 1, end: bytes.length - 1 }]) {
        expect(sha256(await collect(await storage.read(name, range)))).toBe(sha256(bytes.subarray(range.start, range.end + 1)));
      }
      await expect(storage.read(name, { start: 10, end: bytes.length })).rejects.toThrow(StoredRangeError);
      await expect(storage.read(name, { start: bytes.length, end: bytes.length })).rejects.toThrow(StoredRangeError);
      await expect(storage.read(name, { start: 5, end: 4 })).rejects.toThrow(StoredRangeError);
      expect((await listed()).map((o) => [o.name, o.size, o.complete])).toEqual([[name, bytes.length, true]]);
    });

    it('when a PATCH is cut half way, then the upload resumes from the offset the store reports and completes with the same bytes', async () => {
      const bytes = pseudoRandom(11 * MiB + 777, 2);
      const name = randomObjectName();
      await storage.createUpload(name, bytes.length);
      const cutAt = 9 * MiB + 100;
      await expect(tus.write(cutStream(bytes.subarray(0, cutAt)), name, 0)).rejects.toBeDefined();

      const { offset } = await tus.getUpload(name);
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset).toBeLessThanOrEqual(cutAt);
      await expect(storage.stat(name)).resolves.toMatchObject({ size: offset, complete: false });
      await expect(storage.read(name)).rejects.toThrow(StoredObjectNotFoundError);

      const end = await tus.write(Readable.from(chunks(bytes.subarray(offset))), name, offset);
      expect(end).toBe(bytes.length);
      expect(sha256(await collect(await storage.read(name)))).toBe(sha256(bytes));
    });

    it('when a complete object is deleted, then no byte of it is left in the store, and deleting again succeeds', async () => {
      const bytes = pseudoRandom(6 * MiB, 3);
      const name = randomObjectName();
      await storage.createUpload(name, bytes.length);
      await uploadInPatches(name, bytes, [bytes.length]);
      await expect(storage.stat(name)).resolves.toMatchObject({ complete: true });

      await storage.delete(name);
      await expect(store.contents()).resolves.toEqual([]);
      await expect(storage.stat(name)).resolves.toBeNull();
      await expect(listed()).resolves.toEqual([]);
      await expect(storage.read(name)).rejects.toMatchObject({ incomplete: false });
      await expect(tus.getUpload(name)).rejects.toBeDefined();
      await expect(storage.delete(name)).resolves.toBeUndefined();
      await expect(storage.delete(randomObjectName())).resolves.toBeUndefined();
    });

    it('when an incomplete upload (whole parts and a short tail) is deleted, then no byte and no pending part is left', async () => {
      const bytes = pseudoRandom(20 * MiB, 4);
      const name = randomObjectName();
      await storage.createUpload(name, bytes.length);
      await uploadInPatches(name, bytes, [9 * MiB, 2 * MiB]);
      await expect(storage.stat(name)).resolves.toMatchObject({ size: 11 * MiB, complete: false });

      await storage.delete(name);
      await expect(store.contents()).resolves.toEqual([]);
      await expect(storage.stat(name)).resolves.toBeNull();
      await expect(storage.delete(name)).resolves.toBeUndefined();
    });

    it('when several objects are stored, then list yields each once with its state, and deleting one leaves the others intact', async () => {
      const small = pseudoRandom(1000, 5);
      const [a, b, c] = [randomObjectName(), randomObjectName(), randomObjectName()];
      await storage.createUpload(a, small.length);
      await uploadInPatches(a, small, [small.length]);
      await storage.createUpload(b, 2 * MiB);
      await uploadInPatches(b, pseudoRandom(2 * MiB, 6), [MiB]);
      await storage.createUpload(c, 10);

      const all = await listed();
      expect(all.map((o) => o.name).sort()).toEqual([a, b, c].sort());
      expect(Object.fromEntries(all.map((o) => [o.name, [o.size, o.complete]]))).toEqual({ [a]: [1000, true], [b]: [MiB, false], [c]: [0, false] });

      await storage.delete(b);
      expect((await listed()).map((o) => o.name).sort()).toEqual([a, c].sort());
      expect(sha256(await collect(await storage.read(a, { start: 0, end: 999 })))).toBe(sha256(small));
    });

    it('when a name is not one randomObjectName() makes, then every call refuses it', async () => {
      for (const bad of ['../etc', 'a.info', 'ABCDEF0123456789ABCDEF0123456789', '']) {
        await expect(storage.createUpload(bad, 10)).rejects.toThrow(TypeError);
        await expect(storage.stat(bad)).rejects.toThrow(TypeError);
        await expect(storage.delete(bad)).rejects.toThrow(TypeError);
        await expect(storage.read(bad)).rejects.toThrow(TypeError);
      }
      await expect(storage.createUpload(randomObjectName(), 0)).rejects.toThrow(RangeError);
    });
  });
}

function pseudoRandom(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let block = Buffer.alloc(0);
  for (let offset = 0, counter = 0; offset < length; offset += block.length, counter++) {
    block = createHash('sha512').update(`${seed}:${counter}`).digest();
    block.copy(out, offset);
  }
  return out;
}

/** The bytes in 64 KiB chunks, as a network delivers them. */
function* chunks(bytes: Buffer): Generator<Buffer> {
  for (let i = 0; i < bytes.length; i += 64 * 1024) yield bytes.subarray(i, i + 64 * 1024);
}

/** A request body whose connection drops after these bytes. */
function cutStream(bytes: Buffer): Readable {
  const parts = [...chunks(bytes)];
  return new Readable({
    read() {
      const next = parts.shift();
      if (next !== undefined) this.push(next);
      else this.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }));
    },
  });
}

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

import { ManualClock, ValidationError, silentLogger } from '@vanish/common';
import { validateCreateNote } from '../domain/create-note-validator';
import { RangeNotSatisfiableError } from './errors';
import { parseRange } from './file-routes';
import { FileService, DEFAULT_FILE_LIMITS } from './file-service';
import { FileTokens, FILE_TOKEN } from './file-tokens';
import type { FileRecords } from './ports';
import type { FileStorage } from './storage/ports';

const ENVELOPE = 'vz1.AAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
const KEY_CHECK = 'A'.repeat(43);

describe('files in the create request (DECISIONS 14)', () => {
  const sealed = { client_encrypted: true, content: ENVELOPE, key_check: KEY_CHECK };
  const refusal = (body: unknown) => {
    try {
      validateCreateNote(body);
    } catch (err) {
      if (err instanceof ValidationError) return [err.code, err.parameter];
      throw err;
    }
    return undefined;
  };

  it('when sizes are declared beside client_encrypted, then they are carried over; absent or null, the input has no files key', () => {
    expect(validateCreateNote({ ...sealed, files: [{ size: 1 }, { size: 2 ** 40, name: 'ignored' }] }).files).toEqual([{ size: 1 }, { size: 2 ** 40 }]);
    expect(validateCreateNote(sealed)).not.toHaveProperty('files');
    expect(validateCreateNote({ ...sealed, files: null })).not.toHaveProperty('files');
  });

  it.each([
    [{ content: 'text', files: [{ size: 1 }] }],
    [{ ...sealed, files: [] }],
    [{ ...sealed, files: {} }],
    [{ ...sealed, files: [{}] }],
    [{ ...sealed, files: [{ size: 0 }] }],
    [{ ...sealed, files: [{ size: -1 }] }],
    [{ ...sealed, files: [{ size: 1.5 }] }],
    [{ ...sealed, files: [{ size: 2 ** 53 }] }],
    [{ ...sealed, files: [{ size: '1' }] }],
    [{ ...sealed, files: [null] }],
    [{ ...sealed, files: [[1]] }],
  ])('when files is %j, then INVALID_FILES names files', (body) => {
    expect(refusal(body)).toEqual(['INVALID_FILES', 'files']);
  });
});

describe('one Range of a download', () => {
  it.each([
    [undefined, null],
    ['bytes=0-99', { start: 0, end: 99 }],
    ['bytes=10-', { start: 10, end: 99 }],
    ['bytes=-10', { start: 90, end: 99 }],
    ['bytes=-1000', { start: 0, end: 99 }],
    ['bytes=50-5000', { start: 50, end: 99 }],
    ['bytes=99-99', { start: 99, end: 99 }],
    ['bytes=0-1,5-9', null],
    ['items=0-1', null],
    ['bytes=-', null],
  ])('when Range is %p on 100 bytes, then it is %j', (header, expected) => {
    expect(parseRange(header, 100)).toEqual(expected);
  });

  it.each([['bytes=100-'], ['bytes=100-200'], ['bytes=5-4'], ['bytes=-0']])('when Range is %p on 100 bytes, then 416 with Content-Range bytes */100', (header) => {
    try {
      parseRange(header, 100);
      throw new Error('not refused');
    } catch (err) {
      expect(err).toBeInstanceOf(RangeNotSatisfiableError);
      expect((err as RangeNotSatisfiableError).headers).toEqual({ 'Content-Range': 'bytes */100' });
    }
  });
});

describe('FileService', () => {
  const created: string[] = [];
  const deleted: string[] = [];
  let failAt = 0;
  const storage = {
    kind: 'fs',
    async createUpload(name: string) {
      if (created.length + 1 === failAt) throw new Error('store down');
      created.push(name);
    },
    async delete(name: string) { deleted.push(name); },
  } as unknown as FileStorage;
  const service = new FileService({
    storage, records: {} as FileRecords, tokens: new FileTokens(Buffer.alloc(32, 7)), clock: new ManualClock(), limits: { ...DEFAULT_FILE_LIMITS, maxCount: 3, maxBytes: 100 },
    publicBaseUrl: 'https://v.example/', logger: silentLogger,
  });

  beforeEach(() => { created.length = 0; deleted.length = 0; failAt = 0; });

  it('when files are prepared, then each gets a random 32-hex object name and a 43-character token whose keyed hash alone is kept', async () => {
    const prepared = await service.prepare([10, 20]);
    expect(prepared.records.map((r) => r.size)).toEqual([10, 20]);
    expect(prepared.records.map((r) => r.position)).toEqual([0, 1]);
    for (const [i, record] of prepared.records.entries()) {
      const token = prepared.uploads[i]!.token;
      expect(token).toMatch(FILE_TOKEN);
      expect(record.objectName).toMatch(/^[0-9a-f]{32}$/);
      expect(record.uploadKey).toMatch(/^[0-9a-f]{64}$/);
      expect(record.uploadKey).not.toContain(token);
      expect(new FileTokens(Buffer.alloc(32, 7)).keyOf('upload', token)).toBe(record.uploadKey);
      expect(new FileTokens(Buffer.alloc(32, 7)).keyOf('download', token)).not.toBe(record.uploadKey);
    }
    expect(created).toEqual(prepared.records.map((r) => r.objectName));
    expect(service.uploadUrl(prepared.uploads[0]!.token)).toBe(`https://v.example/files/uploads/${prepared.uploads[0]!.token}`);
  });

  it('when the store fails on the second upload, then the first is deleted again and the creation answers 503', async () => {
    failAt = 2;
    await expect(service.prepare([10, 20, 30])).rejects.toMatchObject({ statusCode: 503, code: 'SERVICE_UNAVAILABLE' });
    expect(created).toHaveLength(1);
    expect(deleted).toEqual(expect.arrayContaining(created));
  });

  it('when more files or bytes are declared than the limits allow, then 400 INVALID_FILES or 413 FILES_TOO_LARGE, before the store is asked', async () => {
    await expect(service.prepare([1, 1, 1, 1])).rejects.toMatchObject({ statusCode: 400, code: 'INVALID_FILES', parameter: 'files' });
    await expect(service.prepare([50, 51])).rejects.toMatchObject({ statusCode: 413, code: 'FILES_TOO_LARGE', parameter: 'files' });
    expect(created).toEqual([]);
  });
});

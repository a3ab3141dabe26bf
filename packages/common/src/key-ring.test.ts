import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvReader } from './config';
import { KeyRing, MessageSealer, aeadOpen, aeadSeal, loadKeyRing, loadSecretKey } from './key-ring';

const key = (byte: number) => Buffer.alloc(32, byte).toString('base64');

describe('KeyRing', () => {
  it('when parsed, then the first key seals and every key is found by id', () => {
    const ring = KeyRing.parse(`k2:${key(2)}, k1:${key(1)}`);
    expect(ring.current.id).toBe('k2');
    expect(ring.find('k1')?.material.equals(Buffer.alloc(32, 1))).toBe(true);
  });

  it.each([
    ['a key of the wrong length', `k1:${Buffer.alloc(16).toString('base64')}`],
    ['a missing id', `:${key(1)}`],
    ['duplicate ids', `k1:${key(1)},k1:${key(2)}`],
    ['nothing', ''],
  ])('when given %s, then parsing fails', (_what, text) => {
    expect(() => KeyRing.parse(text)).toThrow();
  });

  it('when serialized and parsed again, then it is the same ring', () => {
    const ring = KeyRing.generate('k9');
    expect(KeyRing.parse(ring.serialize()).current.material.equals(ring.current.material)).toBe(true);
  });
});

describe('AEAD', () => {
  it('when one bit of the box or its associated data changes, then opening fails', () => {
    const k = Buffer.alloc(32, 7);
    const box = aeadSeal(k, Buffer.from('secret'), Buffer.from('row-1'));
    expect(aeadOpen(k, box, Buffer.from('row-1')).toString()).toBe('secret');
    const flipped = Buffer.from(box);
    flipped[14]! ^= 1;
    expect(() => aeadOpen(k, flipped, Buffer.from('row-1'))).toThrow();
    expect(() => aeadOpen(k, box, Buffer.from('row-2'))).toThrow();
  });
});

describe('MessageSealer', () => {
  it('when the ring rotates, then messages sealed under the old key still open', () => {
    const old = KeyRing.parse(`k1:${key(1)}`);
    const sealed = new MessageSealer(old, 'test').seal('{"to":"a@b.example"}');
    expect(sealed).not.toContain('a@b.example');
    const rotated = KeyRing.parse(`k2:${key(2)},k1:${key(1)}`);
    expect(new MessageSealer(rotated, 'test').open(sealed)).toBe('{"to":"a@b.example"}');
  });

  it('when opened for another purpose, then it fails', () => {
    const ring = KeyRing.parse(`k1:${key(1)}`);
    const sealed = new MessageSealer(ring, 'one').seal('x');
    expect(() => new MessageSealer(ring, 'two').open(sealed)).toThrow();
  });
});

describe('loadKeyRing', () => {
  it('when unset outside production, then a key is generated once into the data dir, private, and reused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const first = loadKeyRing(new EnvReader({}), 'MASTER_KEYS', dir);
    const file = join(dir, 'keys', 'master_keys.txt');
    expect(existsSync(file)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = loadKeyRing(new EnvReader({}), 'MASTER_KEYS', dir);
    expect(second?.serialize()).toBe(first?.serialize());
    expect(readFileSync(file, 'utf8').trim()).toBe(first?.serialize());
  });

  it('when unset in production, then it is a configuration problem and nothing is generated', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const reader = new EnvReader({ NODE_ENV: 'production' });
    expect(loadKeyRing(reader, 'MASTER_KEYS', dir)).toBeUndefined();
    expect(() => reader.done()).toThrow(/MASTER_KEYS/);
    expect(existsSync(join(dir, 'keys'))).toBe(false);
  });
});

// Issue 32: keys are generated only into a folder that holds no data at all; beside data, a missing or
// unreadable key file stops the start naming the file; generated ids are never reused.
describe('loadKeyRing beside existing data', () => {
  const fresh = () => mkdtempSync(join(tmpdir(), 'keys-beside-data-'));

  it('when a first start makes several keys into an empty folder, then each gets its own new id, files 0600 in a 0700 folder', () => {
    const dir = fresh();
    const master = loadKeyRing(new EnvReader({}), 'MASTER_KEYS', dir)!;
    const receipts = loadKeyRing(new EnvReader({}), 'RECEIPT_SIGNING_KEYS', dir)!;
    expect(loadSecretKey(new EnvReader({}), 'LOOKUP_KEY', dir)).toHaveLength(32);
    expect(master.current.id).toMatch(/^m\d{8}-[0-9a-f]{12}$/);
    expect(receipts.current.id).toMatch(/^r\d{8}-[0-9a-f]{12}$/);
    expect(readdirSync(join(dir, 'keys')).sort()).toEqual(['lookup_key.txt', 'master_keys.txt', 'receipt_signing_keys.txt']);
    expect(statSync(join(dir, 'keys')).mode & 0o777).toBe(0o700);
    for (const file of readdirSync(join(dir, 'keys'))) expect(statSync(join(dir, 'keys', file)).mode & 0o777).toBe(0o600);
  });

  it('when a key is made again after a loss, then it never has the lost key\'s id', () => {
    const ids = new Set(Array.from({ length: 50 }, () => KeyRing.generate().current.id));
    expect(ids.size).toBe(50);
    expect(ids.has('k1')).toBe(false);
  });

  it.each([
    ['a database', (dir: string) => writeFileSync(join(dir, 'notes.db'), '')],
    ['a database journal', (dir: string) => writeFileSync(join(dir, 'mailer.db-wal'), '')],
    ['another key file', (dir: string) => { mkdirSync(join(dir, 'keys')); writeFileSync(join(dir, 'keys', 'lookup_key.txt'), 'x'); }],
  ])('when the key file is missing beside %s, then nothing is generated and the problem names the file and what to restore', (_what, makeData) => {
    const dir = fresh();
    makeData(dir);
    const reader = new EnvReader({});
    expect(loadKeyRing(reader, 'MASTER_KEYS', dir)).toBeUndefined();
    const file = join(dir, 'keys', 'master_keys.txt');
    expect(existsSync(file)).toBe(false);
    expect(() => reader.done()).toThrow(`MASTER_KEYS: the key file ${file} is missing, but ${dir} already holds data`);
    expect(() => reader.done()).toThrow(`Restore it from your backup of ${join(dir, 'keys')}, or set MASTER_KEYS`);
  });

  it('when only another service\'s database is there, then a key that guards notes.db is made; beside notes.db it is not', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'webhooks.db'), '');
    expect(loadKeyRing(new EnvReader({}), 'MASTER_KEYS', dir, undefined, undefined, { guards: ['notes.db'] })).toBeDefined();
    const other = fresh();
    writeFileSync(join(other, 'notes.db-wal'), '');
    const reader = new EnvReader({});
    expect(loadKeyRing(reader, 'MASTER_KEYS', other, undefined, undefined, { guards: ['notes.db'] })).toBeUndefined();
    expect(() => reader.done()).toThrow(/already holds data \(notes\.db-wal\)/);
  });

  it('when a key file cannot be read, then the problem names the file', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'keys'));
    writeFileSync(join(dir, 'keys', 'master_keys.txt'), 'k1:short\n');
    const reader = new EnvReader({});
    expect(loadKeyRing(reader, 'MASTER_KEYS', dir)).toBeUndefined();
    expect(() => reader.done()).toThrow(`MASTER_KEYS: the key file ${join(dir, 'keys', 'master_keys.txt')} cannot be read (key "k1" must be 32 bytes of base64, got`);
  });

  it('when a key whose loss costs nothing lasting is missing beside data, then it is made again; a successor ring beside its legacy file too', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'gateway.db'), '');
    expect(loadSecretKey(new EnvReader({}), 'LIMITER_KEY', dir, undefined, undefined, { regenerable: true })).toHaveLength(32);
    mkdirSync(join(dir, 'keys'), { recursive: true });
    writeFileSync(join(dir, 'keys', 'mail_keys.txt'), KeyRing.generate().serialize());
    expect(loadKeyRing(new EnvReader({}), 'MAIL_PRIVATE_KEYS', dir, undefined, undefined, { succeeds: 'mail_keys.txt' })).toBeDefined();
  });
});

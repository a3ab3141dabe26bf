import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EnvReader } from './config';
import { KeyRing, MessageSealer, aeadOpen, aeadSeal, loadKeyRing } from './key-ring';

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

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, EnvReader } from './config';
import { CONSUMER_SEAL_PREFIX, ConsumerOpener, ConsumerSealer, isSealedToConsumer, loadPublicKeyRing, publicRingOf } from './consumer-sealing';
import { KeyRing, MessageSealer } from './key-ring';

const PURPOSE = 'test.purpose.v1';
const message = '{"to":"reader@example.com","link":"https://vanish.test/1b4e28ba-2fa1-4d2b-883f-0016d3cca427"}';

function pair(id = 'm1') {
  const privateRing = KeyRing.generate(id);
  return { privateRing, publicRing: publicRingOf(privateRing) };
}

describe('sealing to the consumer', () => {
  it('when sealed to the public ring, then only the private ring opens it, and the box names its key', () => {
    const { privateRing, publicRing } = pair('m1');
    const sealed = new ConsumerSealer(publicRing, PURPOSE).seal(message);
    expect(sealed.startsWith(`${CONSUMER_SEAL_PREFIX}m1.`)).toBe(true);
    expect(isSealedToConsumer(sealed)).toBe(true);
    expect(sealed).not.toContain('reader@example.com');
    expect(new ConsumerOpener(privateRing, PURPOSE).open(sealed)).toBe(message);
  });

  it('when the same message is sealed twice, then each box has a fresh ephemeral key and nonce', () => {
    const { publicRing } = pair();
    const sealer = new ConsumerSealer(publicRing, PURPOSE);
    const bodies = Array.from({ length: 5 }, () => Buffer.from(sealer.seal(message).split('.')[1]!, 'base64'));
    const ephemeralKeys = new Set(bodies.map((body) => body.subarray(0, 32).toString('hex')));
    const nonces = new Set(bodies.map((body) => body.subarray(32, 44).toString('hex')));
    expect(ephemeralKeys.size).toBe(5);
    expect(nonces.size).toBe(5);
  });

  it('when opened with another private key of the same id, then it fails', () => {
    const { publicRing } = pair('m1');
    const sealed = new ConsumerSealer(publicRing, PURPOSE).seal(message);
    expect(() => new ConsumerOpener(KeyRing.generate('m1'), PURPOSE).open(sealed)).toThrow();
  });

  it('when the box names a key id the ring does not hold, then it fails saying so', () => {
    const sealed = new ConsumerSealer(pair('m9').publicRing, PURPOSE).seal(message);
    expect(() => new ConsumerOpener(KeyRing.generate('m1'), PURPOSE).open(sealed)).toThrow(/unknown key/);
  });

  it.each([
    ['the ephemeral public key', 3],
    ['the nonce', 35],
    ['the ciphertext', 50],
    ['the tag', -1],
  ])('when one bit of %s changes, then opening fails', (_part, index) => {
    const { privateRing, publicRing } = pair();
    const sealed = new ConsumerSealer(publicRing, PURPOSE).seal(message);
    const [head, body] = sealed.split('.') as [string, string];
    const bytes = Buffer.from(body, 'base64');
    bytes[index < 0 ? bytes.length + index : index]! ^= 1;
    expect(() => new ConsumerOpener(privateRing, PURPOSE).open(`${head}.${bytes.toString('base64')}`)).toThrow();
  });

  it('when the key id in the header is swapped for another key of the ring, then opening fails', () => {
    const privateRing = new KeyRing([...KeyRing.generate('m2').keys, ...KeyRing.generate('m1').keys]);
    const sealed = new ConsumerSealer(publicRingOf(privateRing), PURPOSE).seal(message);
    expect(() => new ConsumerOpener(privateRing, PURPOSE).open(sealed.replace(':m2.', ':m1.'))).toThrow();
  });

  it('when sealed for another purpose, then opening fails', () => {
    const { privateRing, publicRing } = pair();
    const sealed = new ConsumerSealer(publicRing, 'other.v1').seal(message);
    expect(() => new ConsumerOpener(privateRing, PURPOSE).open(sealed)).toThrow();
  });

  it('when the consumer rotates (new key first), then boxes sealed to the old public key still open', () => {
    const old = pair('m1');
    const sealedBefore = new ConsumerSealer(old.publicRing, PURPOSE).seal(message);
    const rotated = new KeyRing([...KeyRing.generate('m2').keys, ...old.privateRing.keys]);
    const sealedAfter = new ConsumerSealer(publicRingOf(rotated), PURPOSE).seal(message);
    expect(sealedAfter.startsWith(`${CONSUMER_SEAL_PREFIX}m2.`)).toBe(true);
    const opener = new ConsumerOpener(rotated, PURPOSE);
    expect(opener.open(sealedBefore)).toBe(message);
    expect(opener.open(sealedAfter)).toBe(message);
  });

  it('when given a symmetric MessageSealer box, then it is not taken for one sealed to the consumer', () => {
    const legacy = new MessageSealer(KeyRing.generate('m1'), PURPOSE).seal(message);
    expect(isSealedToConsumer(legacy)).toBe(false);
    expect(() => new ConsumerOpener(pair().privateRing, PURPOSE).open(legacy)).toThrow();
  });

  it('when the public ring is derived, then it holds no private material', () => {
    const { privateRing, publicRing } = pair();
    expect(publicRing.current.material.equals(privateRing.current.material)).toBe(false);
    expect(publicRing.serialize()).not.toContain(privateRing.current.material.toString('base64'));
  });
});

describe('loadPublicKeyRing', () => {
  it('when the public ring is set, then it is parsed and no private key file is made', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vanish-consumer-'));
    const { publicRing } = pair('m3');
    const reader = new EnvReader({ PUB: publicRing.serialize() });
    expect(loadPublicKeyRing(reader, 'PUB', 'PRIV', dataDir)?.serialize()).toBe(publicRing.serialize());
    expect(existsSync(join(dataDir, 'keys', 'priv.txt'))).toBe(false);
  });

  it('when unset outside production, then it is the public half of the private ring generated into DATA_DIR', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vanish-consumer-'));
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {}, child() { return logger; } };
    const ring = loadPublicKeyRing(new EnvReader({}), 'PUB', 'PRIV', dataDir, logger)!;
    expect(existsSync(join(dataDir, 'keys', 'priv.txt'))).toBe(true);
    expect(warnings.join('\n')).toMatch(/PRIV is not set/);
    const privateRing = loadPublicKeyRing(new EnvReader({}), 'PUB', 'PRIV', dataDir);
    expect(privateRing?.serialize()).toBe(ring.serialize());
  });

  it('when unset in production, then it is a problem naming the variable', () => {
    const reader = new EnvReader({ NODE_ENV: 'production' });
    loadPublicKeyRing(reader, 'MAIL_PUBLIC_KEYS', 'MAIL_PRIVATE_KEYS', mkdtempSync(join(tmpdir(), 'vanish-consumer-')));
    expect(() => reader.done()).toThrow(ConfigError);
    expect(() => reader.done()).toThrow(/MAIL_PUBLIC_KEYS: required with NODE_ENV=production/);
  });
});

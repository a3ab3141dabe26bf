import { createPrivateKey, createPublicKey, diffieHellman, hkdfSync } from 'node:crypto';
import { open } from '../envelope';
import {
  isKeyText, keyCheckFor, newKeyPair, noteKeyFor, openFrom, parseRequestEnvelope, publicKeyOf, sealTo,
} from '../request-seal';

/** docs/requests.md, "Test vector": the same numbers. */
const VECTOR = {
  requestPrivate: 'AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA',
  requestPublic: 'B6N8vBQgk8i3VdwbEOhstCY3StFqqFPtC9_AsrhtHHw',
  ephemeralPrivate: 'gIGCg4SFhoeIiYqLjI2Oj5CRkpOUlZaXmJmam5ydnp8',
  ephemeralPublic: 'ST6C_HRGSlkmiBdiPSBTxeuOLMSpiLT-4XnsawENUx0',
  key: 'JezE1usdB2XdExf_qEY-XJGeDvVqL256UalMVUFfv3E',
  keyCheck: 'Y8qTsm9CnVXsUKAQYtxbea5Ku-KnAoHRl_qtNAHb6-0',
  content: 'vr1.ST6C_HRGSlkmiBdiPSBTxeuOLMSpiLT-4XnsawENUx0.58yREXUEKkKa3CoT.g8vi4wr0T_-9Y6HyIF8zcjXemph3eUlW6LXQZhYkU00eyDk',
  text: 'the API key is 4711',
};

const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const nodePrivate = (text: string) => createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, Buffer.from(text, 'base64url')]), format: 'der', type: 'pkcs8' });
const nodePublic = (text: string) => createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: text }, format: 'jwk' });

describe('sealing to a request (DECISIONS 15, docs/requests.md)', () => {
  it('when the test vector is recomputed, then the keys, K, key_check and the text all match', async () => {
    await expect(publicKeyOf(VECTOR.requestPrivate)).resolves.toBe(VECTOR.requestPublic);
    await expect(publicKeyOf(VECTOR.ephemeralPrivate)).resolves.toBe(VECTOR.ephemeralPublic);
    await expect(noteKeyFor(VECTOR.requestPrivate, VECTOR.ephemeralPublic)).resolves.toBe(VECTOR.key);
    await expect(keyCheckFor(VECTOR.requestPrivate, VECTOR.ephemeralPublic)).resolves.toBe(VECTOR.keyCheck);
    const parsed = parseRequestEnvelope(VECTOR.content);
    expect(parsed?.ephemeralPublicKey).toBe(VECTOR.ephemeralPublic);
    await expect(openFrom(VECTOR.requestPrivate, VECTOR.ephemeralPublic, parsed!.envelope)).resolves.toBe(VECTOR.text);
    await expect(open(parsed!.envelope, VECTOR.key)).resolves.toBe(VECTOR.text);
  });

  it('when K is derived by an independent X25519 and HKDF (node:crypto), then it is the same K from either side', () => {
    const shared = diffieHellman({ privateKey: nodePrivate(VECTOR.ephemeralPrivate), publicKey: nodePublic(VECTOR.requestPublic) });
    const salt = Buffer.concat([Buffer.from(VECTOR.ephemeralPublic, 'base64url'), Buffer.from(VECTOR.requestPublic, 'base64url')]);
    expect(Buffer.from(hkdfSync('sha256', shared, salt, 'vanish request v1', 32)).toString('base64url')).toBe(VECTOR.key);
    const back = diffieHellman({ privateKey: nodePrivate(VECTOR.requestPrivate), publicKey: nodePublic(VECTOR.ephemeralPublic) });
    expect(back.equals(shared)).toBe(true);
  });

  it('when a sender seals to a new pair, then only that pair\'s private key opens it, and each seal has its own ephemeral key', async () => {
    const pair = await newKeyPair();
    const other = await newKeyPair();
    expect(isKeyText(pair.publicKey) && isKeyText(pair.privateKey)).toBe(true);
    const first = await sealTo(pair.publicKey, 'one');
    const second = await sealTo(pair.publicKey, 'one');
    const a = parseRequestEnvelope(first.content)!;
    expect(a.ephemeralPublicKey).not.toBe(parseRequestEnvelope(second.content)!.ephemeralPublicKey);
    await expect(openFrom(pair.privateKey, a.ephemeralPublicKey, a.envelope)).resolves.toBe('one');
    await expect(openFrom(other.privateKey, a.ephemeralPublicKey, a.envelope)).rejects.toThrow();
    await expect(keyCheckFor(other.privateKey, a.ephemeralPublicKey)).resolves.not.toBe(first.keyCheck);
  });

  it('when a request envelope is malformed, then it does not parse; a low-order public key is refused', async () => {
    for (const bad of ['', 'vz1.abc.def', `vr1.${VECTOR.ephemeralPublic}.x.y`, `vr2${VECTOR.content.slice(3)}`, `${VECTOR.content}.extra`, `vr1.short.${VECTOR.content.split('.').slice(2).join('.')}`]) {
      expect(parseRequestEnvelope(bad)).toBeNull();
    }
    const zero = Buffer.alloc(32).toString('base64url');
    await expect(sealTo(zero, 'x')).rejects.toThrow();
    expect(isKeyText('abc')).toBe(false);
  });
});

import { createPrivateKey, createPublicKey, createSecretKey, diffieHellman, generateKeyPairSync, hkdfSync, type KeyObject } from 'node:crypto';
import type { EnvReader } from './config';
import { KeyRing, aeadOpen, aeadSeal, loadKeyRing, type KeyFileOptions } from './key-ring';
import type { Logger } from './logger';

/**
 * Sealing TO THE CONSUMER (DECISIONS 1): the producer holds only the consumer's public keys, so
 * nothing the producer keeps (its database, backups, binlogs, its own keys) opens what it sealed.
 * Each message: a fresh ephemeral X25519 key pair, an agreement with the consumer's public key,
 * HKDF-SHA-256 of the shared secret into an AES-256-GCM key.
 *
 * Wire form: `x25519:<keyId>.<base64(ephemeral public key 32 | nonce 12 | ciphertext | tag 16)>`.
 * The `x25519:` prefix cannot begin a symmetric MessageSealer box (its key ids have no colon), so a
 * consumer tells the two apart while both kinds are still queued.
 *
 * Both rings use the KeyRing text form `id:BASE64`: private keys are 32-byte X25519 scalars, public
 * keys the 32-byte X25519 public values (publicRingOf derives them).
 */
/** What a producer needs: ConsumerSealer, or the symmetric MessageSealer while a migration lasts. */
export interface MessageSealing {
  seal(plaintext: string): string;
}

/** What a consumer needs to open a message. */
export interface MessageOpening {
  open(sealed: string): string;
}

export const CONSUMER_SEAL_PREFIX = 'x25519:';

const PUBLIC_KEY_BYTES = 32;
// The DER header of X25519 private keys (RFC 8410): node:crypto imports raw X25519 keys only through DER or JWK.
const PKCS8_X25519_HEADER = Buffer.from('302e020100300506032b656e04220420', 'hex');

function privateKeyObject(material: Buffer): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519_HEADER, material]), format: 'der', type: 'pkcs8' });
}

/** As JWK: the same key as through SPKI DER, about a fifth cheaper to import on Node 24. */
function publicKeyObject(material: Buffer): KeyObject {
  if (material.length !== PUBLIC_KEY_BYTES) throw new Error(`an X25519 public key is ${PUBLIC_KEY_BYTES} bytes`);
  return createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: material.toString('base64url') }, format: 'jwk' });
}

function rawPublicKey(key: KeyObject): Buffer {
  const der = key.export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - PUBLIC_KEY_BYTES);
}

/** The public ring that matches a private ring: same ids, same order. */
export function publicRingOf(privateRing: KeyRing): KeyRing {
  return new KeyRing(privateRing.keys.map((key) => ({ id: key.id, material: rawPublicKey(createPublicKey(privateKeyObject(key.material))) })));
}

/**
 * KeyObjects in and out: on Node 24, HKDF and AES-GCM given a Buffer key spend three to six times the
 * work itself checking the key (docs/performance.md, the mailer pipeline); wrapping costs about 1 µs.
 */
function messageKey(shared: Buffer, ephemeralPublic: Buffer, recipientPublic: Buffer, info: string): KeyObject {
  const salt = Buffer.concat([ephemeralPublic, recipientPublic]);
  return createSecretKey(new Uint8Array(hkdfSync('sha256', createSecretKey(shared), salt, info, 32)));
}

export function isSealedToConsumer(sealed: string): boolean {
  return sealed.startsWith(CONSUMER_SEAL_PREFIX);
}

/** The producer's half: seals to the first public key of the consumer's ring. */
export class ConsumerSealer {
  private readonly recipientKey: KeyObject;

  constructor(private readonly publicRing: KeyRing, private readonly purpose: string) {
    this.recipientKey = publicKeyObject(publicRing.current.material);
  }

  seal(plaintext: string): string {
    const recipient = this.publicRing.current;
    const ephemeral = generateKeyPairSync('x25519');
    const ephemeralPublic = rawPublicKey(ephemeral.publicKey);
    const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: this.recipientKey });
    const label = `${this.purpose}:${recipient.id}`;
    const key = messageKey(shared, ephemeralPublic, recipient.material, label);
    const box = aeadSeal(key, Buffer.from(plaintext, 'utf8'), Buffer.from(label));
    return `${CONSUMER_SEAL_PREFIX}${recipient.id}.${Buffer.concat([ephemeralPublic, box]).toString('base64')}`;
  }
}

/** The consumer's half: opens with whichever private key the message names. */
export class ConsumerOpener {
  private readonly byId: Map<string, { privateKey: KeyObject; publicMaterial: Buffer }>;

  constructor(privateRing: KeyRing, private readonly purpose: string) {
    this.byId = new Map(privateRing.keys.map((key) => {
      const privateKey = privateKeyObject(key.material);
      return [key.id, { privateKey, publicMaterial: rawPublicKey(createPublicKey(privateKey)) }];
    }));
  }

  /** Throws when the key id is unknown, the key is wrong, or a single bit changed. */
  open(sealed: string): string {
    if (!isSealedToConsumer(sealed)) throw new Error('not a message sealed to a consumer');
    const rest = sealed.slice(CONSUMER_SEAL_PREFIX.length);
    const dot = rest.indexOf('.');
    const id = dot > 0 ? rest.slice(0, dot) : '';
    const key = this.byId.get(id);
    if (!key) throw new Error('sealed message names an unknown key');
    const bytes = Buffer.from(rest.slice(dot + 1), 'base64');
    if (bytes.length < PUBLIC_KEY_BYTES + 28) throw new Error('sealed message too short');
    const ephemeralPublic = bytes.subarray(0, PUBLIC_KEY_BYTES);
    const shared = diffieHellman({ privateKey: key.privateKey, publicKey: publicKeyObject(ephemeralPublic) });
    const label = `${this.purpose}:${id}`;
    const messageKeyBytes = messageKey(shared, ephemeralPublic, key.publicMaterial, label);
    return aeadOpen(messageKeyBytes, bytes.subarray(PUBLIC_KEY_BYTES), Buffer.from(label)).toString('utf8');
  }
}

/**
 * The producer's public ring from PUBLIC_NAME (or PUBLIC_NAME_FILE). Outside production, when it is
 * unset, it is derived from the consumer's private ring PRIVATE_NAME as loadKeyRing finds or
 * generates it in DATA_DIR (the same file the consumer loads when both share DATA_DIR, as in the
 * all-in-one process). With NODE_ENV=production the public ring must be given.
 */
export function loadPublicKeyRing(
  reader: EnvReader, publicName: string, privateName: string, dataDir: string, logger?: Logger, whenLost?: string, options: KeyFileOptions = {},
): KeyRing | undefined {
  const text = reader.raw(publicName);
  if (text !== undefined) {
    try {
      const ring = KeyRing.parse(text);
      for (const key of ring.keys) publicKeyObject(key.material);
      return ring;
    } catch (err) {
      reader.problem(`${publicName}: ${(err as Error).message}`);
      return undefined;
    }
  }
  if (reader.isProduction) {
    reader.problem(`${publicName}: required with NODE_ENV=production (the consumer's public keys; keys are never generated in production)`);
    return undefined;
  }
  const privateRing = loadKeyRing(reader, privateName, dataDir, logger, whenLost, options);
  return privateRing && publicRingOf(privateRing);
}

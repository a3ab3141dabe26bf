import { createPrivateKey, createPublicKey, hkdfSync } from 'node:crypto';
import { ConsumerOpener, ConsumerSealer, KeyRing, aeadOpen, aeadSeal } from '@vanish/common';

const PKCS8_X25519_HEADER = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SETTINGS_INFO = 'vanish.request-settings.v1';
const INBOX_INFO = 'vanish.request-inbox.v1';
const INBOX_PURPOSE = 'vanish.request-inbox-box.v1';

/** What a request keeps sealed under its own id: shown to senders, used when one submits. */
export interface RequestSettings {
  label: string;
  allowedOrigins: string[];
  notificationEmail: string | null;
  /** The language of the page that made the request: its e-mails are written in it. */
  lang?: string;
}

/**
 * The server's side of a request's secrets (DECISIONS 15 with section 1). Settings are sealed under a key derived
 * from the master key and the request id, so that they open only for someone who holds the request link. The
 * inbox's boxes (the request id, each submission's uuid) are sealed to an X25519 public key whose private half is
 * derived from the master key and the inbox id and never stored: a sender, holding only the request id, can add
 * to the inbox but never read it back, and a copy of the database with every key still opens neither.
 */
export class RequestCrypto {
  constructor(private readonly masterKeys: KeyRing) {}

  get currentKeyId(): string {
    return this.masterKeys.current.id;
  }

  private material(keyId: string): Buffer {
    const key = this.masterKeys.find(keyId);
    if (!key) throw new Error(`master key ${keyId} is no longer in MASTER_KEYS`);
    return key.material;
  }

  private settingsKey(keyId: string, requestId: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.material(keyId), Buffer.from(requestId, 'utf8'), SETTINGS_INFO, 32));
  }

  sealSettings(keyId: string, requestId: string, settings: RequestSettings): Buffer {
    return aeadSeal(this.settingsKey(keyId, requestId), Buffer.from(JSON.stringify(settings), 'utf8'), Buffer.from(SETTINGS_INFO));
  }

  openSettings(keyId: string, requestId: string, box: Buffer): RequestSettings {
    return JSON.parse(aeadOpen(this.settingsKey(keyId, requestId), box, Buffer.from(SETTINGS_INFO)).toString('utf8')) as RequestSettings;
  }

  private inboxPrivate(keyId: string, inboxId: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.material(keyId), Buffer.from(inboxId, 'utf8'), INBOX_INFO, 32));
  }

  /** The public key the inbox's boxes are sealed to (base64url), derived from the inbox id. */
  inboxSealKey(keyId: string, inboxId: string): string {
    const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_X25519_HEADER, this.inboxPrivate(keyId, inboxId)]), format: 'der', type: 'pkcs8' });
    const der = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
    return der.subarray(der.length - 32).toString('base64url');
  }

  /** Seals to the inbox with only its public key (a submission holds no inbox id). */
  sealToInbox(inboxSealKey: string, plaintext: string): string {
    return new ConsumerSealer(new KeyRing([{ id: 'inbox', material: Buffer.from(inboxSealKey, 'base64url') }]), INBOX_PURPOSE).seal(plaintext);
  }

  openForInbox(keyId: string, inboxId: string, sealed: string): string {
    return new ConsumerOpener(new KeyRing([{ id: 'inbox', material: this.inboxPrivate(keyId, inboxId) }]), INBOX_PURPOSE).open(sealed);
  }
}

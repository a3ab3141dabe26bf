import {
  ConsumerOpener, MAIL_SEAL_PURPOSE, MessageSealer, isSealedToConsumer, type KeyRing, type MessageOpening,
} from '@vanish/common';

export interface MailCommandOpenerOptions {
  /** MAIL_PRIVATE_KEYS: opens what notes sealed to the mailer's public keys. */
  privateKeys: KeyRing;
  /** MAIL_KEYS while commands sealed under the old symmetric ring may still be queued; undefined once retired. */
  legacyKeys?: KeyRing;
  /** Told of every legacy command opened: the operator's sign that the old ring is still in use. */
  onLegacyOpened?: () => void;
}

/**
 * Opens a mail command whichever way it was sealed during the migration of DECISIONS 1: sealed to
 * the mailer (X25519), or under the legacy symmetric MAIL_KEYS ring. The two forms cannot be taken
 * for each other (isSealedToConsumer).
 */
export class MailCommandOpener implements MessageOpening {
  private readonly current: ConsumerOpener;
  private readonly legacy: MessageSealer | undefined;

  constructor(private readonly options: MailCommandOpenerOptions) {
    this.current = new ConsumerOpener(options.privateKeys, MAIL_SEAL_PURPOSE);
    this.legacy = options.legacyKeys && new MessageSealer(options.legacyKeys, MAIL_SEAL_PURPOSE);
  }

  open(sealed: string): string {
    if (isSealedToConsumer(sealed)) return this.current.open(sealed);
    if (!this.legacy) throw new Error('sealed under the legacy MAIL_KEYS ring, which this mailer no longer holds');
    const opened = this.legacy.open(sealed);
    this.options.onLegacyOpened?.();
    return opened;
  }
}

/** One e-mail, fully rendered: the transport adds nothing but the envelope. */
export interface OutgoingEmail {
  /** Stable per mail command, so a receiver can drop duplicates (Message-ID). */
  messageId: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Readonly<Record<string, string>>;
}

export type TransportKind = 'smtp' | 'file';

/** Port: hands an e-mail to whatever delivers it (an SMTP server, or a folder of .eml files). */
export interface MailTransport {
  readonly kind: TransportKind;
  /** Resolves only once the e-mail was accepted (SMTP 250 after DATA, or the file written). */
  send(email: OutgoingEmail): Promise<void>;
  /** True when the transport can deliver now (SMTP: connect, greet, authenticate). */
  verify(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * A failed hand-over, classified by the adapter:
 * - temporary: 4xx replies, connection failures, timeouts, and problems of our own configuration
 *   (authentication, a rejected sender), which an operator can fix: try again later;
 * - permanent: a 5xx rejection of this recipient or this message: never retried, and
 *   `recipientRejected` says the address should get nothing more.
 * `reason` never holds an address: adapters scrub it.
 */
export class MailDeliveryError extends Error {
  constructor(
    readonly kind: 'temporary' | 'permanent',
    readonly reason: string,
    readonly options: { responseCode?: number; recipientRejected?: boolean; cause?: unknown } = {},
  ) {
    super(reason, { cause: options.cause });
    this.name = 'MailDeliveryError';
  }

  get recipientRejected(): boolean {
    return this.options.recipientRejected === true;
  }
}

const ADDRESS_LIKE = /[^\s<>"'()[\],;:]+@[^\s<>"'()[\],;:]+/g;

/** Replaces anything shaped like an address (SMTP replies often quote the recipient). */
export function scrubAddresses(text: string): string {
  return text.replace(ADDRESS_LIKE, '[address]');
}

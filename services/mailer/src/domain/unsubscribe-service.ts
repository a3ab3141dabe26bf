import type { Clock, Logger } from '@vanish/common';
import type { MailerStore } from './mailer-store';
import type { UnsubscribeTokens } from './unsubscribe-tokens';

/** One click stops every further e-mail to the address the token was sent to. */
export class UnsubscribeService {
  constructor(private readonly deps: { store: MailerStore; tokens: UnsubscribeTokens; clock: Clock; logger: Logger }) {}

  isValid(token: string): boolean {
    return this.deps.tokens.verify(token) !== undefined;
  }

  /** False for a token this mailer never issued; idempotent otherwise. */
  async unsubscribe(token: string): Promise<boolean> {
    const addressHash = this.deps.tokens.verify(token);
    if (addressHash === undefined) return false;
    await this.deps.store.suppress(addressHash, 'unsubscribed', this.deps.clock.now());
    this.deps.logger.info('address unsubscribed', { addressHashPrefix: addressHash.slice(0, 8) });
    return true;
  }
}

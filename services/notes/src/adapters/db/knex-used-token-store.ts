import type { Knex } from 'knex';
import type { Clock } from '@vanish/common';
import type { UsedTokenStore } from '../../http/form-tokens';
import { withDatabase } from './database-errors';

const PURGE_EVERY = 200;

/**
 * Redeemed form tokens in the notes database: the primary key makes "first use wins" atomic
 * across replicas. Expired entries are purged now and then by the writers themselves.
 */
export class KnexUsedTokenStore implements UsedTokenStore {
  private writes = 0;

  constructor(private readonly knex: Knex, private readonly clock: Clock, private readonly timeoutMs = 3_000) {}

  async consume(tokenId: string, expiresAt: Date): Promise<boolean> {
    return withDatabase(async () => {
      this.writes += 1;
      if (this.writes % PURGE_EVERY === 0) {
        await this.knex('used_form_tokens').where('expires_at', '<', this.clock.now().getTime()).delete();
      }
      try {
        await this.knex('used_form_tokens').insert({ token_id: tokenId, expires_at: expiresAt.getTime() });
        return true;
      } catch (err) {
        if (isUniqueViolation(err)) return false;
        throw err;
      }
    }, this.timeoutMs);
  }
}

/** The token id is already there: a replay. */
function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ER_DUP_ENTRY' || (typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT'));
}

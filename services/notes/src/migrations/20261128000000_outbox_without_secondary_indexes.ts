import type { Knex } from 'knex';

/**
 * Issue 35: the outbox's rows live for milliseconds (written with their note, claimed, published, deleted),
 * and every secondary index is written three times per row (insert, claim, delete) and purged once more by
 * InnoDB. None of the three is needed: the relay finds claimable rows by walking the primary key in `seq`
 * order (only the rows other live relays hold can stand at the front, at most a batch each), reads its claim
 * back by `seq` with its token, and an event's `id` is a random UUID that nothing looks up (consumers drop
 * duplicates by it on their side).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('outbox', (t) => {
    t.dropUnique(['id']);
    t.dropIndex(['claim_token'], 'outbox_claim_token_idx');
    t.dropIndex(['claimed_until'], 'outbox_claimed_until_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('outbox', (t) => {
    t.unique(['id']);
    t.index(['claim_token'], 'outbox_claim_token_idx');
    t.index(['claimed_until'], 'outbox_claimed_until_idx');
  });
}

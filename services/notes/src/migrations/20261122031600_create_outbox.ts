import type { Knex } from 'knex';

/**
 * The transactional outbox: rows written in the same transaction as the note change they
 * describe, claimed by a relay under a lease and deleted once the broker confirmed them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('outbox', (t) => {
    t.bigIncrements('seq').primary();
    t.string('id', 64).notNullable().unique();
    t.string('routing_key', 64).notNullable();
    t.text('body').notNullable();
    t.bigInteger('created_at').notNullable();
    t.string('claim_token', 64).nullable();
    t.bigInteger('claimed_until').nullable();
    t.index(['claim_token'], 'outbox_claim_token_idx');
    t.index(['claimed_until'], 'outbox_claimed_until_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('outbox');
}

import type { Knex } from 'knex';

/** Redeemed web-form tokens (CSRF), kept until they expire so that a replay is refused on any replica. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('used_form_tokens', (t) => {
    t.string('token_id', 64).primary();
    t.bigInteger('expires_at').notNullable();
    t.index(['expires_at'], 'used_form_tokens_expires_at_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('used_form_tokens');
}

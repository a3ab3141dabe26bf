import type { Knex } from 'knex';

/**
 * Recipients are keyed by a keyed hash of the address (never the address); deliveries by the mail
 * command id. Times are epoch milliseconds, which compare the same way on both dialects.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('mailer_recipients', (t) => {
    t.string('address_hash', 64).primary();
    t.bigInteger('suppressed_at').nullable();
    t.string('suppression_reason', 16).nullable();
    t.bigInteger('touched_at').notNullable();
  });
  await knex.schema.createTable('mailer_deliveries', (t) => {
    t.string('command_id', 100).primary();
    t.string('address_hash', 64).notNullable();
    t.string('kind', 16).notNullable();
    t.string('state', 16).notNullable();
    t.boolean('counted').notNullable();
    t.integer('attempts').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.index(['address_hash', 'created_at'], 'mailer_deliveries_quota_idx');
    t.index(['created_at'], 'mailer_deliveries_created_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('mailer_deliveries');
  await knex.schema.dropTable('mailer_recipients');
}

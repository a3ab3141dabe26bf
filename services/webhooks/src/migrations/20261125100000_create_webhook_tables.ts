import type { Knex } from 'knex';

/**
 * Delivery records (DECISIONS 11): which target of which event is settled, with counts and status
 * codes; no payload, URL or secret. Times are UTC epoch milliseconds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.string('event_id', 64).notNullable();
    t.string('target_key', 64).notNullable();
    t.string('status', 16).notNullable();
    t.integer('attempts').notNullable();
    t.integer('http_status').nullable();
    t.bigInteger('updated_at').notNullable();
    t.primary(['event_id', 'target_key']);
    t.index(['updated_at'], 'webhook_deliveries_updated_at_idx');
  });
  await knex.schema.createTable('webhook_gone_notes', (t) => {
    t.string('note_ref', 64).primary();
    t.bigInteger('created_at').notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_gone_notes');
  await knex.schema.dropTable('webhook_deliveries');
}

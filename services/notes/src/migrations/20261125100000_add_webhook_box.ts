import type { Knex } from 'knex';

/**
 * DECISIONS 11: a note's webhook (URL and signing secret) sealed to the webhooks service; notes
 * cannot open it. Null for notes without a webhook.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.text('webhook_box').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.dropColumn('webhook_box');
  });
}

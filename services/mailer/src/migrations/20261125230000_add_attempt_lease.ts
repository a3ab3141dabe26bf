import type { Knex } from 'knex';

/**
 * Until when a delivery's current attempt holds its command (epoch ms; 0 when none does): a second
 * delivery of the same command meanwhile is deferred instead of sending a second e-mail. Rows that
 * exist already get 0: none of them is being sent by this version yet.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mailer_deliveries', (t) => {
    t.bigInteger('attempt_until').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mailer_deliveries', (t) => {
    t.dropColumn('attempt_until');
  });
}

import type { Knex } from 'knex';

/**
 * Passcode checks under way: a guess reserves its attempt here before scrypt runs, so that no more
 * than five guesses are ever checked (failed_attempts + attempts_in_flight < 5). See
 * docs/notes-storage.md, "wrong passcode".
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.integer('attempts_in_flight').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.dropColumn('attempts_in_flight');
  });
}

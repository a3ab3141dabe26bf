import type { Knex } from 'knex';

/**
 * Passcode checks under way: a guess reserves its attempt here before scrypt runs, so that no more
 * than five guesses are ever checked (failed_attempts + attempts_in_flight < 5).
 * attempts_reserved_until (epoch ms) is when the latest reservation's check is presumed dead (its
 * replica crashed before settling it). See docs/notes-storage.md, "wrong passcode".
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.integer('attempts_in_flight').notNullable().defaultTo(0);
    t.bigInteger('attempts_reserved_until').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.dropColumn('attempts_in_flight');
    t.dropColumn('attempts_reserved_until');
  });
}

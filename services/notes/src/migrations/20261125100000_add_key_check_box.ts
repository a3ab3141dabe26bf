import type { Knex } from 'knex';

/**
 * DECISIONS 13: a note sealed on the writer's machine keeps the proof of its fragment key, sealed
 * (nonce | 32 bytes | tag = 60 bytes). Null for notes whose text the server sealed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.binary('key_check_box', 64).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.dropColumn('key_check_box');
  });
}

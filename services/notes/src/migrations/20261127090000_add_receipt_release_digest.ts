import type { Knex } from 'knex';

/**
 * DECISIONS 17: each reveal's timeline row records the digest of the release manifest the service served
 * then (`sha256:` and 64 hex digits). Null for other rows and for reveals recorded before this column.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('receipt_events', (t) => {
    t.string('release_digest', 72).nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('receipt_events', (t) => {
    t.dropColumn('release_digest');
  });
}

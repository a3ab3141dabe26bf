import type { Knex } from 'knex';

/**
 * Notes, keyed by the HMAC of their uuid. Secrets are sealed boxes (nonce | ciphertext | tag);
 * times are UTC epoch milliseconds, so both dialects compare them the same way.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('notes', (t) => {
    t.string('lookup', 64).primary();
    t.string('note_ref', 32).notNullable().unique();
    t.string('key_id', 32).notNullable();
    t.binary('salt', 16).notNullable();
    t.string('kdf', 64).nullable();
    t.binary('check_box', 64).notNullable();
    t.binary('content_box').notNullable();
    t.binary('email_box', 512).nullable();
    t.boolean('has_passcode').notNullable();
    t.string('expiry_type', 8).notNullable();
    t.integer('max_views').notNullable();
    t.integer('current_views').notNullable().defaultTo(0);
    t.integer('failed_attempts').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.index(['expires_at'], 'notes_expires_at_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('notes');
}

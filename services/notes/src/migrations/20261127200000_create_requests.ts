import type { Knex } from 'knex';

/**
 * Requests (DECISIONS 15): a drop box keyed by a keyed hash of its request id, found from the inbox by a
 * keyed hash of the inbox id; neither id is stored. What a sender needs (label, allowed origins) and the
 * notification address are sealed under a key of the request id and the master key; the request id itself is
 * sealed to the inbox (a public key whose private half is derived from the inbox id, never stored), and so is
 * each submission's note uuid. The requester's X25519 public key and each submission's ephemeral public key are
 * public by design. Submissions are notes: their rows here hold only the note's lookup (to read its state),
 * the sealed uuid, times, a size and whether the requester opened it. Times are UTC epoch milliseconds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('requests', (t) => {
    t.string('request_key', 64).primary();
    t.string('inbox_key', 64).notNullable().unique();
    t.string('request_ref', 32).notNullable().unique();
    t.string('key_id', 32).notNullable();
    t.string('public_key', 43).notNullable();
    t.string('inbox_seal_key', 43).notNullable();
    t.binary('settings_box', 8192).notNullable();
    t.text('request_id_box').notNullable();
    t.text('webhook_box').nullable();
    t.boolean('allow_files').notNullable().defaultTo(false);
    t.string('expiry_type', 8).notNullable();
    t.integer('expiry_hours').notNullable();
    t.integer('max_views').notNullable();
    t.integer('max_submissions').notNullable();
    t.integer('submissions').notNullable().defaultTo(0);
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('closed_at').nullable();
    t.index(['expires_at'], 'requests_expires_at_idx');
  });
  await knex.schema.createTable('request_submissions', (t) => {
    t.bigIncrements('seq').primary();
    t.string('request_key', 64).notNullable();
    t.integer('number').notNullable();
    t.string('note_lookup', 64).notNullable();
    t.text('uuid_box').notNullable();
    t.string('ephemeral_key', 43).notNullable();
    t.integer('size').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('note_expires_at').notNullable();
    t.bigInteger('opened_at').nullable();
    t.unique(['request_key', 'number'], { indexName: 'request_submissions_number_idx' });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('request_submissions');
  await knex.schema.dropTable('requests');
}

import type { Knex } from 'knex';

/**
 * Files of notes (DECISIONS 14). One row per declared file: the random object name the store keeps its
 * bytes under (unrelated to every id), the keyed hash of its upload token, the declared ciphertext size
 * and the upload's state. Rows outlive their note's row until the bytes are deleted (hold_until: the
 * download window after a reveal), so that no ending of a note can leave bytes behind unseen.
 * Download tokens are stored as keyed hashes with their expiry, apart from the files they open.
 * Times are UTC epoch milliseconds, as in the notes table. The notes table gains two counters.
 */
export async function up(knex: Knex): Promise<void> {
  // Read with the note (no second query on the hot paths): how many files it has, and how many of them
  // are still being uploaded (a reveal claims a view only when none is: the claim's own condition).
  await knex.schema.alterTable('notes', (t) => {
    t.integer('file_count').notNullable().defaultTo(0);
    t.integer('files_pending').notNullable().defaultTo(0);
  });
  await knex.schema.createTable('note_files', (t) => {
    t.string('object_name', 64).primary();
    t.string('note_lookup', 64).notNullable();
    t.string('note_ref', 32).notNullable();
    t.integer('position').notNullable();
    t.string('upload_key', 64).notNullable().unique();
    t.bigInteger('size').notNullable();
    t.string('state', 12).notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('hold_until').notNullable().defaultTo(0);
    t.index(['note_lookup'], 'note_files_note_lookup_idx');
    t.index(['state', 'created_at'], 'note_files_state_idx');
  });
  await knex.schema.createTable('note_file_downloads', (t) => {
    t.string('download_key', 64).primary();
    t.string('object_name', 64).notNullable();
    t.string('note_ref', 32).notNullable();
    t.bigInteger('size').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.index(['expires_at'], 'note_file_downloads_expires_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('note_file_downloads');
  await knex.schema.dropTable('note_files');
  await knex.schema.alterTable('notes', (t) => {
    t.dropColumn('files_pending');
    t.dropColumn('file_count');
  });
}

import type { Knex } from 'knex';

/**
 * Receipts (DECISIONS 12): the creator's record of a note, keyed by a keyed hash of the receipt id
 * and joined to the note by its random note_ref (never the uuid or its lookup hash). They outlive
 * the note's row; ended_at starts the retention after which the purger deletes them.
 * Timeline rows carry a kind, a time and, for page fetches, a coarse client class: no address,
 * no user agent.
 */
export async function up(knex: Knex): Promise<void> {
  // The receipt id sealed under the note key, beside a notification e-mail (its link goes in the e-mail).
  await knex.schema.alterTable('notes', (t) => {
    t.binary('receipt_box', 128).nullable();
  });
  await knex.schema.createTable('receipts', (t) => {
    t.string('receipt_key', 64).primary();
    t.string('note_ref', 32).notNullable().unique();
    t.string('expiry_type', 8).notNullable();
    t.integer('max_views').notNullable();
    t.boolean('has_passcode').notNullable();
    t.bigInteger('created_at').notNullable();
    t.bigInteger('expires_at').notNullable();
    t.bigInteger('ended_at').nullable();
    t.string('end_reason', 16).nullable();
    t.index(['ended_at'], 'receipts_ended_at_idx');
    t.index(['expires_at'], 'receipts_expires_at_idx');
  });
  await knex.schema.createTable('receipt_events', (t) => {
    t.bigIncrements('seq').primary();
    t.string('note_ref', 32).notNullable();
    t.bigInteger('at').notNullable();
    t.string('kind', 16).notNullable();
    t.string('client', 24).nullable();
    t.string('reason', 16).nullable();
    t.index(['note_ref', 'kind'], 'receipt_events_note_ref_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('receipt_events');
  await knex.schema.dropTable('receipts');
  await knex.schema.alterTable('notes', (t) => {
    t.dropColumn('receipt_box');
  });
}

import type { Knex } from 'knex';

/**
 * DECISIONS 16, the creator's time controls. On the note: the shrink after the first view (minutes,
 * and when it happened), the release gate (`release_at`: a fixed time, or the end of the current
 * silence period of a dead-man's switch, moved forward by each check-in), the switch's period, when
 * the release was announced, and the link e-mail kept for that moment, sealed to the mailer (notes
 * cannot open it). On the receipt: the same settings, so that it can say "scheduled" or "held"
 * after the note's row is gone.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('notes', (t) => {
    t.integer('shrink_minutes').nullable();
    t.bigInteger('shrunk_at').nullable();
    t.bigInteger('release_at').nullable();
    t.integer('silence_hours').nullable();
    t.bigInteger('released_at').nullable();
    t.text('release_mail').nullable();
    // The sweeper asks for `released_at IS NULL AND release_at <= now`: announced notes are not scanned again.
    t.index(['released_at', 'release_at'], 'notes_release_due_idx');
  });
  await knex.schema.alterTable('receipts', (t) => {
    t.integer('shrink_minutes').nullable();
    t.bigInteger('release_at').nullable();
    t.integer('silence_hours').nullable();
    t.bigInteger('released_at').nullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('receipts', (t) => {
    t.dropColumn('shrink_minutes');
    t.dropColumn('release_at');
    t.dropColumn('silence_hours');
    t.dropColumn('released_at');
  });
  await knex.schema.alterTable('notes', (t) => {
    t.dropIndex(['released_at', 'release_at'], 'notes_release_due_idx');
    t.dropColumn('shrink_minutes');
    t.dropColumn('shrunk_at');
    t.dropColumn('release_at');
    t.dropColumn('silence_hours');
    t.dropColumn('released_at');
    t.dropColumn('release_mail');
  });
}

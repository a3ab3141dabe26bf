import type { Knex } from 'knex';

/**
 * Each kind of e-mail has its own quota per address (link e-mails must not silence read
 * notifications), so the quota count filters on kind too: the index follows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mailer_deliveries', (t) => {
    t.index(['address_hash', 'kind', 'created_at'], 'mailer_deliveries_kind_quota_idx');
  });
  await knex.schema.alterTable('mailer_deliveries', (t) => {
    t.dropIndex(['address_hash', 'created_at'], 'mailer_deliveries_quota_idx');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('mailer_deliveries', (t) => {
    t.index(['address_hash', 'created_at'], 'mailer_deliveries_quota_idx');
  });
  await knex.schema.alterTable('mailer_deliveries', (t) => {
    t.dropIndex(['address_hash', 'kind', 'created_at'], 'mailer_deliveries_kind_quota_idx');
  });
}

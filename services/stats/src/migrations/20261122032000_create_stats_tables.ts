import type { Knex } from 'knex';

/**
 * The stats service's own tables (it never reads the notes tables). Nothing here can hold a
 * note uuid, an IP address, an e-mail address or content: counters, per-minute and per-hour
 * creation counts, digests of seen event ids (pruned), and the last heartbeat per instance.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('stats_counters', (t) => {
    t.string('name', 32).primary();
    t.bigInteger('value').notNullable().defaultTo(0);
  });
  await knex('stats_counters').insert(
    ['notes_created', 'notes_ended', 'notes_ended_read', 'notes_accessed', 'notes_failed_access'].map((name) => ({ name, value: 0 })),
  );
  await knex.schema.createTable('stats_created_minutes', (t) => {
    // Minutes since the Unix epoch (UTC).
    t.bigInteger('minute').primary();
    t.bigInteger('created').notNullable();
  });
  await knex.schema.createTable('stats_created_hours', (t) => {
    t.bigInteger('hour').primary();
    t.bigInteger('created').notNullable();
  });
  await knex.schema.createTable('stats_seen_events', (t) => {
    // Hex SHA-256 prefix of the event id: enough to tell ids apart, and no id is kept as such.
    t.string('id_digest', 32).primary();
    t.bigInteger('seen_at').notNullable().index('stats_seen_events_seen_at');
  });
  await knex.schema.createTable('stats_heartbeats', (t) => {
    t.string('service', 16).notNullable();
    t.string('instance', 64).notNullable();
    t.string('components', 512).notNullable();
    t.bigInteger('observed_at').notNullable();
    t.primary(['service', 'instance']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('stats_heartbeats');
  await knex.schema.dropTableIfExists('stats_seen_events');
  await knex.schema.dropTableIfExists('stats_created_hours');
  await knex.schema.dropTableIfExists('stats_created_minutes');
  await knex.schema.dropTableIfExists('stats_counters');
}

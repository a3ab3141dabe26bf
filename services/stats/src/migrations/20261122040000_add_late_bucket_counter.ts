import type { Knex } from 'knex';

/**
 * A counter of writes into creation buckets two or more minutes old (events that arrive late:
 * a catch-up after an outage, a retry). The stats service caches the windows' sums over complete
 * minutes and recomputes them when the minute changes or when this counter moves.
 */
export async function up(knex: Knex): Promise<void> {
  await knex('stats_counters').insert({ name: 'created_bucket_late_writes', value: 0 });
}

export async function down(knex: Knex): Promise<void> {
  await knex('stats_counters').where({ name: 'created_bucket_late_writes' }).delete();
}

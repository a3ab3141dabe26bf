import type { Knex } from 'knex';
import { isMysql } from '../adapters/db/commit-outcome';

/**
 * DECISIONS 14 and 15: an answer's size is its envelope's characters plus its files' sealed bytes, which
 * FILE_MAX_BYTES lets exceed a 32-bit INT (2 GiB). MariaDB's column becomes BIGINT, as note_files.size is;
 * SQLite's INTEGER holds 64 bits already.
 */
export async function up(knex: Knex): Promise<void> {
  if (isMysql(knex)) await knex.raw('ALTER TABLE request_submissions MODIFY size BIGINT NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  if (isMysql(knex)) await knex.raw('ALTER TABLE request_submissions MODIFY size INT NOT NULL');
}

import type { Knex } from 'knex';
import { migrateUnderLock, staticMigrations, type Migration } from '@vanish/common';
import * as createNotes from '../../migrations/20261122031500_create_notes';
import * as createOutbox from '../../migrations/20261122031600_create_outbox';
import * as createUsedFormTokens from '../../migrations/20261122040000_create_used_form_tokens';
import * as addAttemptsInFlight from '../../migrations/20261125090000_add_attempts_in_flight';
import * as createReceipts from '../../migrations/20261125090000_create_receipts';
import * as addKeyCheckBox from '../../migrations/20261125100000_add_key_check_box';
import * as addWebhookBox from '../../migrations/20261125100000_add_webhook_box';
import * as addReceiptReleaseDigest from '../../migrations/20261127090000_add_receipt_release_digest';
import * as createNoteFiles from '../../migrations/20261127100000_create_note_files';
import * as createRequests from '../../migrations/20261127200000_create_requests';
import * as addTimeControls from '../../migrations/20261127300000_add_time_controls';
import * as widenRequestSubmissionSize from '../../migrations/20261127400000_widen_request_submission_size';
import * as outboxWithoutSecondaryIndexes from '../../migrations/20261128000000_outbox_without_secondary_indexes';

/** Every migration, in order. Listed statically so they run the same under jest and from dist. */
const MIGRATIONS: ReadonlyArray<readonly [string, Migration]> = [
  ['20261122031500_create_notes', createNotes],
  ['20261122031600_create_outbox', createOutbox],
  ['20261122040000_create_used_form_tokens', createUsedFormTokens],
  ['20261125090000_add_attempts_in_flight', addAttemptsInFlight],
  ['20261125090000_create_receipts', createReceipts],
  ['20261125100000_add_key_check_box', addKeyCheckBox],
  ['20261125100000_add_webhook_box', addWebhookBox],
  ['20261127090000_add_receipt_release_digest', addReceiptReleaseDigest],
  ['20261127100000_create_note_files', createNoteFiles],
  ['20261127200000_create_requests', createRequests],
  ['20261127300000_add_time_controls', addTimeControls],
  ['20261127400000_widen_request_submission_size', widenRequestSubmissionSize],
  ['20261128000000_outbox_without_secondary_indexes', outboxWithoutSecondaryIndexes],
];

/** The notes service's own bookkeeping tables, so it can share a database without colliding. */
export const MIGRATION_CONFIG: Knex.MigratorConfig = staticMigrations('notes_knex_migrations', MIGRATIONS);

/** Runs pending migrations; replicas starting together take turns (common's migrateUnderLock). */
export function migrateToLatest(knex: Knex, waitMs?: number): Promise<string[]> {
  return migrateUnderLock(knex, MIGRATION_CONFIG, waitMs);
}

/** Rolls every migration back (tests and operators only). */
export async function rollbackAll(knex: Knex): Promise<string[]> {
  const [, reverted] = (await knex.migrate.rollback(MIGRATION_CONFIG, true)) as [number, string[]];
  return reverted;
}

export const MIGRATION_NAMES: readonly string[] = MIGRATIONS.map(([name]) => name);

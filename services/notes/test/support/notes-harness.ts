import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { ConsumerOpener, ConsumerSealer, KeyRing, MAIL_SEAL_PURPOSE, ManualClock, publicRingOf, silentLogger, type Clock } from '@vanish/common';
import { ExpirySweeper } from '../../src/domain/expiry-sweeper';
import { NoteCrypto, type ScryptParams, type SealedNote } from '../../src/domain/note-crypto';
import { NoteService } from '../../src/domain/note-service';
import type { CreateNoteInput } from '../../src/domain/notes';
import { KnexNoteStore } from '../../src/adapters/db/knex-note-store';
import { KnexOutboxStore } from '../../src/adapters/db/knex-outbox-store';
import { KnexReceiptStore } from '../../src/adapters/db/knex-receipt-store';
import { ReceiptIds } from '../../src/receipts/receipt-ids';
import { ReceiptPurger } from '../../src/receipts/receipt-purger';
import { ReceiptService } from '../../src/receipts/receipt-service';
import { ReceiptSigner } from '../../src/receipts/receipt-signer';

/** Cheap scrypt for tests; production parameters are asserted in note-crypto.test.ts. */
export const TEST_KDF: ScryptParams = { N: 1024, r: 8, p: 1 };

export interface NotesKeys {
  masterKeys: KeyRing;
  lookupKey: Buffer;
  /** The mailer's private ring: notes gets only its public half; tests open commands with it. */
  mailPrivateKeys: KeyRing;
  /** Ed25519 seeds that sign receipts (a fresh ring when absent). */
  receiptSigningKeys?: KeyRing;
}

export function newKeys(): NotesKeys {
  return { masterKeys: KeyRing.generate('k1'), lookupKey: randomBytes(32), mailPrivateKeys: KeyRing.generate('m1') };
}

/** Counts passcode checks (scrypt and the check block) of every replica it is given to. */
export class PasscodeChecks {
  count = 0;
}

/** The real NoteCrypto, counting each check of an offered passcode against a protected note. */
class CountingNoteCrypto extends NoteCrypto {
  constructor(keys: NotesKeys, private readonly checks: PasscodeChecks) {
    super({ masterKeys: keys.masterKeys, lookupKey: keys.lookupKey, kdf: TEST_KDF });
  }

  override open(uuid: string, passcode: string | null, sealed: SealedNote) {
    if (passcode !== null && sealed.kdf !== null) this.checks.count += 1;
    return super.open(uuid, passcode, sealed);
  }
}

/** The real domain on real knex stores, wired the way compose.ts does it. */
export function buildNotes(knex: Knex, keys: NotesKeys = newKeys(), clock: Clock = new ManualClock(new Date()), checks = new PasscodeChecks(), retentionHours = 720) {
  const store = new KnexNoteStore(knex, clock);
  const outbox = new KnexOutboxStore(knex, clock);
  const crypto = new CountingNoteCrypto(keys, checks);
  const mailSealer = new ConsumerSealer(publicRingOf(keys.mailPrivateKeys), MAIL_SEAL_PURPOSE);
  const mailOpener = new ConsumerOpener(keys.mailPrivateKeys, MAIL_SEAL_PURPOSE);
  const receiptIds = new ReceiptIds(keys.lookupKey);
  const service = new NoteService({
    store, crypto, mailSealer, clock, publicBaseUrl: 'http://localhost:8080', retentionHours, logger: silentLogger, receiptIds,
  });
  const sweeper = () => new ExpirySweeper({ store, clock, intervalMs: 60_000, logger: silentLogger, batchSize: 3 });
  const receiptStore = new KnexReceiptStore(knex);
  const signer = new ReceiptSigner(keys.receiptSigningKeys ?? KeyRing.generate('r1'));
  const receipts = new ReceiptService({
    store, receipts: receiptStore, ids: receiptIds, noteCrypto: crypto, signer, clock, publicBaseUrl: 'http://localhost:8080', retentionHours, logger: silentLogger,
  });
  const receiptPurger = () => new ReceiptPurger({ receipts: receiptStore, clock, retentionHours, intervalMs: 60_000, logger: silentLogger, batchSize: 2 });
  return { store, outbox, crypto, mailSealer, mailOpener, service, sweeper, keys, clock, receipts, receiptStore, signer, receiptPurger, checks };
}

export const noteInput = (over: Partial<CreateNoteInput> = {}): CreateNoteInput => ({
  content: 'hello', expiryType: 'view', expiryHours: 24, maxViews: 1, passcode: null, notificationEmail: null, sendLinkEmail: null, ...over,
});

export interface OutboxEvent {
  routingKey: string;
  body: { id: string; event: string; data: Record<string, unknown>; sealed?: string };
}

export async function outboxEvents(knex: Knex): Promise<OutboxEvent[]> {
  const rows: Array<{ routing_key: string; body: string }> = await knex('outbox').select('routing_key', 'body').orderBy('seq');
  return rows.map((row) => ({ routingKey: row.routing_key, body: JSON.parse(row.body) as OutboxEvent['body'] }));
}

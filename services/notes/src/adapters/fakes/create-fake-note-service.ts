import { randomBytes } from 'node:crypto';
import { ConsumerOpener, ConsumerSealer, KeyRing, MAIL_SEAL_PURPOSE, ManualClock, publicRingOf, silentLogger, type Logger } from '@vanish/common';
import { NoteCrypto } from '../../domain/note-crypto';
import type { NoteEventsObserver } from '../../domain/note-events';
import { NoteService } from '../../domain/note-service';
import { FakeNoteStore } from './fake-note-store';
import { ReceiptIds } from '../../receipts/receipt-ids';

export interface FakeNoteServiceOptions {
  publicBaseUrl?: string;
  retentionHours?: number;
  clock?: ManualClock;
  logger?: Logger;
  events?: NoteEventsObserver;
}

/**
 * The real NoteService on an in-memory store, with fresh keys and cheap scrypt, for unit tests of
 * the entry points (STYLE H3). Returns the parts so a test can inspect the store and move the clock.
 */
export function createFakeNoteService(options: FakeNoteServiceOptions = {}) {
  const store = new FakeNoteStore();
  const clock = options.clock ?? new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const mailPrivateKeys = KeyRing.generate('m1');
  const mailSealer = new ConsumerSealer(publicRingOf(mailPrivateKeys), MAIL_SEAL_PURPOSE);
  const mailOpener = new ConsumerOpener(mailPrivateKeys, MAIL_SEAL_PURPOSE);
  const lookupKey = randomBytes(32);
  const crypto = new NoteCrypto({ masterKeys: KeyRing.generate('k1'), lookupKey, kdf: { N: 1024, r: 8, p: 1 } });
  const receiptIds = new ReceiptIds(lookupKey);
  const service = new NoteService({
    store,
    crypto,
    mailSealer,
    clock,
    publicBaseUrl: options.publicBaseUrl ?? 'http://localhost:8080',
    retentionHours: options.retentionHours ?? 720,
    logger: options.logger ?? silentLogger,
    events: options.events,
    receiptIds,
  });
  return { service, store, clock, crypto, mailSealer, mailOpener, receiptIds };
}

import type { MailKind } from '../../src/domain/mail-command';
import type { MailerStore } from '../../src/domain/mailer-store';

export interface StoreHarness {
  store: MailerStore;
  /** A second store on the same database (another replica), where the technology allows one. */
  replica?: MailerStore;
}

const H = (n: number) => n.toString(16).padStart(64, '0');
const T0 = new Date('2026-03-01T10:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const HOUR = 3_600_000;
const LEASE_MS = 1000;

/** The MailerStore contract: every implementation (fake, SQLite, MariaDB) must pass it. */
export function mailerStoreContract(name: string, open: () => Promise<StoreHarness>, close: () => Promise<void>): void {
  describe(`MailerStore contract: ${name}`, () => {
    let h: StoreHarness;
    beforeEach(async () => { h = await open(); });
    afterEach(async () => { await close(); });

    // Attempts hold their command for a second here (LEASE_MS), unless a test says otherwise.
    const begin = (store: MailerStore, commandId: string, addressHash: string, now = T0, perHour = 2, perDay = 3, kind: MailKind = 'link', attemptLeaseMs = LEASE_MS) =>
      store.beginDelivery({ commandId, addressHash, kind, now, quotaPerHour: perHour, quotaPerDay: perDay, attemptLeaseMs });

    it('when a command comes again while its attempt holds it, then it is in flight, not sent twice; once the attempt ends or its lease runs out, the next delivery sends it', async () => {
      await expect(begin(h.store, 'c1', H(1))).resolves.toEqual({ decision: 'send', attempts: 1, firstAttemptAt: T0 });
      await expect(begin(h.store, 'c1', H(1), at(LEASE_MS - 1))).resolves.toEqual({ decision: 'in_flight' });
      await h.store.endAttempt('c1');
      await expect(begin(h.store, 'c1', H(1), at(LEASE_MS - 1))).resolves.toEqual({ decision: 'send', attempts: 2, firstAttemptAt: T0 });
      await expect(begin(h.store, 'c1', H(1), at(2 * LEASE_MS - 2))).resolves.toEqual({ decision: 'in_flight' });
      // An attempt that died without a word (a crash): its lease runs out and the command is sent again.
      await expect(begin(h.store, 'c1', H(1), at(2 * LEASE_MS))).resolves.toEqual({ decision: 'send', attempts: 3, firstAttemptAt: T0 });
    });

    it('when an attempt still sending extends its hold, then the command stays in flight past the first lease; a sent command is not held again', async () => {
      await begin(h.store, 'c1', H(1));
      await h.store.extendAttempt('c1', at(3 * LEASE_MS));
      await expect(begin(h.store, 'c1', H(1), at(3 * LEASE_MS - 1))).resolves.toEqual({ decision: 'in_flight' });
      await expect(begin(h.store, 'c1', H(1), at(3 * LEASE_MS))).resolves.toEqual({ decision: 'send', attempts: 2, firstAttemptAt: T0 });
      await h.store.markSent('c1', at(3 * LEASE_MS + 1));
      await h.store.extendAttempt('c1', at(10 * LEASE_MS));
      await expect(begin(h.store, 'c1', H(1), at(4 * LEASE_MS))).resolves.toEqual({ decision: 'already_sent' });
    });

    it('when a sent or dropped command\'s attempt is ended, then nothing changes', async () => {
      await begin(h.store, 'c1', H(1));
      await h.store.markSent('c1', at(1));
      await h.store.endAttempt('c1');
      await expect(begin(h.store, 'c1', H(1), at(2))).resolves.toEqual({ decision: 'already_sent' });
    });

    it('when a command is new, then it is reserved; when it comes back, then it is the same delivery with one more attempt', async () => {
      await expect(begin(h.store, 'c1', H(1))).resolves.toEqual({ decision: 'send', attempts: 1, firstAttemptAt: T0 });
      await expect(begin(h.store, 'c1', H(1), at(5000))).resolves.toEqual({ decision: 'send', attempts: 2, firstAttemptAt: T0 });
    });

    it('when a command was sent, then a redelivery is recognised as already sent', async () => {
      await begin(h.store, 'c1', H(1));
      await h.store.markSent('c1', at(1));
      await expect(begin(h.store, 'c1', H(1), at(2))).resolves.toEqual({ decision: 'already_sent' });
    });

    it('when a command failed, then a redelivery is recognised as already handled', async () => {
      await begin(h.store, 'c1', H(1));
      await h.store.markFailed('c1', at(1));
      await expect(begin(h.store, 'c1', H(1), at(2))).resolves.toEqual({ decision: 'already_dropped', state: 'failed' });
    });

    it('when an address used its hourly quota, then the next is over quota until the hour has passed, and other addresses are not affected', async () => {
      await begin(h.store, 'a', H(1));
      await begin(h.store, 'b', H(1), at(1000));
      await expect(begin(h.store, 'c', H(1), at(2000))).resolves.toEqual({ decision: 'over_quota' });
      await expect(begin(h.store, 'c', H(1), at(3000))).resolves.toEqual({ decision: 'already_dropped', state: 'over_quota' });
      await expect(begin(h.store, 'x', H(2), at(2000))).resolves.toMatchObject({ decision: 'send' });
      await expect(begin(h.store, 'd', H(1), at(HOUR + 1))).resolves.toMatchObject({ decision: 'send' });
      await expect(begin(h.store, 'e', H(1), at(2 * HOUR + 1))).resolves.toEqual({ decision: 'over_quota' });
    });

    it('when ten link e-mails went to an address, then its read notification is still reserved, and each kind is limited on its own', async () => {
      for (let i = 0; i < 10; i += 1) {
        await expect(begin(h.store, `link-${i}`, H(3), at(i), 10, 50, 'link')).resolves.toMatchObject({ decision: 'send' });
      }
      await expect(begin(h.store, 'link-10', H(3), at(20), 10, 50, 'link')).resolves.toEqual({ decision: 'over_quota' });
      await expect(begin(h.store, 'read-0', H(3), at(30), 10, 50, 'notification')).resolves.toMatchObject({ decision: 'send' });
      for (let i = 1; i < 10; i += 1) {
        await expect(begin(h.store, `read-${i}`, H(3), at(30 + i), 10, 50, 'notification')).resolves.toMatchObject({ decision: 'send' });
      }
      await expect(begin(h.store, 'read-10', H(3), at(50), 10, 50, 'notification')).resolves.toEqual({ decision: 'over_quota' });
      await expect(begin(h.store, 'read-x', H(4), at(60), 10, 50, 'notification')).resolves.toMatchObject({ decision: 'send' });
    });

    it('when an address used its daily quota of one kind, then the other kind is still reserved that day', async () => {
      await begin(h.store, 'l1', H(5), T0, 1, 2, 'link');
      await begin(h.store, 'l2', H(5), at(HOUR + 1), 1, 2, 'link');
      await expect(begin(h.store, 'l3', H(5), at(2 * HOUR + 2), 1, 2, 'link')).resolves.toEqual({ decision: 'over_quota' });
      await expect(begin(h.store, 'n1', H(5), at(2 * HOUR + 3), 1, 2, 'notification')).resolves.toMatchObject({ decision: 'send' });
    });

    it('when an address is suppressed, then nothing new is reserved for it, and a reserved retry is stopped', async () => {
      await begin(h.store, 'r', H(1));
      expect(await h.store.isSuppressed(H(1))).toBe(false);
      await h.store.suppress(H(1), 'unsubscribed', at(1));
      await h.store.suppress(H(1), 'rejected', at(2));
      expect(await h.store.isSuppressed(H(1))).toBe(true);
      await expect(begin(h.store, 'n', H(1), at(3))).resolves.toEqual({ decision: 'suppressed' });
      await h.store.endAttempt('r'); // its attempt failed for now: the retry comes
      await expect(begin(h.store, 'r', H(1), at(4))).resolves.toEqual({ decision: 'suppressed' });
      await h.store.suppress(H(9), 'unsubscribed', at(5));
      expect(await h.store.isSuppressed(H(9))).toBe(true);
    });

    it('when delivery records are old, then they are purged and newer ones kept', async () => {
      await begin(h.store, 'old', H(1));
      await begin(h.store, 'new', H(1), at(10_000));
      expect(await h.store.purgeDeliveries(at(5000))).toBe(1);
      await expect(begin(h.store, 'new', H(1), at(20_000))).resolves.toMatchObject({ decision: 'send', attempts: 2 });
      expect(await h.store.ping()).toBe(true);
    });

    it('when commands for several addresses arrive together, then each is decided as if alone: quotas per address, a repeated command held by its first attempt, then one more attempt once the hold has run out', async () => {
      // The first command goes alone; the burst (with b0 twice) then waits for it and is decided together.
      const first = begin(h.store, 'first', H(30));
      const burst = Array.from({ length: 24 }, (_, i) => begin(h.store, `b${i}`, H(20 + (i % 3)), at(i), 5, 50));
      const repeated = begin(h.store, 'b0', H(20), at(100), 5, 50);
      const results = await Promise.all([...burst, repeated]);
      await expect(first).resolves.toMatchObject({ decision: 'send' });
      for (let address = 0; address < 3; address += 1) {
        const decisions = results.slice(0, 24).filter((_, i) => i % 3 === address).map((r) => r.decision);
        expect(decisions).toEqual(['send', 'send', 'send', 'send', 'send', 'over_quota', 'over_quota', 'over_quota']);
      }
      expect(results[24]).toEqual({ decision: 'in_flight' });
      await Promise.all(['b0', 'b1', 'b2', 'b3'].map((id, i) => h.store.markSent(id, at(200 + i))));
      const again = await Promise.all(['b0', 'b1', 'b2', 'b3', 'b4', 'b15'].map((id) => begin(h.store, id, H(20 + (Number(id.slice(1)) % 3)), at(LEASE_MS + 300), 5, 50)));
      expect(again.map((r) => r.decision)).toEqual(['already_sent', 'already_sent', 'already_sent', 'already_sent', 'send', 'already_dropped']);
      expect(again[4]).toEqual({ decision: 'send', attempts: 2, firstAttemptAt: at(4) });
    });

    it('when two replicas reserve for one address at the same moment, then the quota is never exceeded', async () => {
      const replica = h.replica ?? h.store;
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) =>
        begin(i % 2 === 0 ? h.store : replica, `p${i}`, H(7), at(i), 5, 50)));
      expect(results.filter((r) => r.decision === 'send')).toHaveLength(5);
      expect(results.filter((r) => r.decision === 'over_quota')).toHaveLength(7);
    });
  });
}

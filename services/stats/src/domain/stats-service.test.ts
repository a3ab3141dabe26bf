import { ManualClock } from '@vanish/common';
import { FakeStatsStore } from '../adapters/fakes/fake-stats-store';
import { effectOf, eventIdDigest, parseNoteEvent } from './note-event-effects';
import { StatsService, successRate } from './stats-service';

const event = (id: string, kind: string, timestamp: string, data: Record<string, unknown> = {}) =>
  parseNoteEvent(JSON.stringify({ id, event: kind, version: 1, timestamp, data: { note_id: 'r', ...data } }));

describe('StatsService', () => {
  it('when no note has ended, then success_rate is 100', () => {
    expect(successRate(0, 0)).toBe(100);
  });

  it('when 2 of 3 ended notes were read, then success_rate is 66.67 (two decimals)', () => {
    expect(successRate(3, 2)).toBe(66.67);
    expect(successRate(8, 1)).toBe(12.5);
  });

  it('when notes were created across days, then the 24h/7d/30d windows count them to the minute', async () => {
    const clock = new ManualClock(new Date('2026-03-31T12:00:30Z'));
    const store = new FakeStatsStore();
    const stamps = [
      '2026-03-31T12:00:10Z', // now
      '2026-03-30T12:01:00Z', // 23h59m ago: inside 24h
      '2026-03-30T12:00:00Z', // exactly 24h before the current minute: outside 24h, inside 7d
      '2026-03-25T00:00:00Z', // inside 7d
      '2026-03-24T12:00:00Z', // 7d before the current minute: outside 7d, inside 30d
      '2026-03-01T12:01:00Z', // inside 30d
      '2026-02-28T00:00:00Z', // outside 30d
    ];
    for (const [i, ts] of stamps.entries()) {
      await store.applyOnce(eventIdDigest(`c${i}`), effectOf(event(`c${i}`, 'note.created', ts), clock.now().getTime()), 0);
    }
    await store.applyOnce(eventIdDigest('d1'), effectOf(event('d1', 'note.destroyed', '2026-03-31T12:00:00Z', { reason: 'views', was_read: true }), 0), 0);
    await store.applyOnce(eventIdDigest('d2'), effectOf(event('d2', 'note.expired', '2026-03-31T12:00:00Z', { reason: 'time', was_read: false }), 0), 0);
    const stats = await new StatsService({ store, clock, heartbeatIntervalMs: 10_000 }).statistics();
    expect(stats).toMatchObject({
      total_notes_created: 7, active_notes: 5, destroyed_notes: 2, success_rate: 50,
      notes_24h: 2, notes_7d: 4, notes_30d: 6, generated_at: '2026-03-31 12:00:30',
    });
  });

  it('when a late creation lands after the windows were summed, then the next answer includes it; when the minute turns, the windows slide', async () => {
    const clock = new ManualClock(new Date('2026-03-31T12:00:30Z'));
    const store = new FakeStatsStore();
    const service = new StatsService({ store, clock, heartbeatIntervalMs: 10_000 });
    const create = (id: string, ts: string) => store.applyOnce(eventIdDigest(id), effectOf(event(id, 'note.created', ts), clock.now().getTime()), 0);
    await create('a', '2026-03-30T12:05:00Z');
    expect((await service.statistics()).notes_24h).toBe(1);
    await create('late', '2026-03-31T08:00:00Z');
    await create('now', '2026-03-31T12:00:00Z');
    expect((await service.statistics()).notes_24h).toBe(3);
    clock.advance(5 * 60_000); // 12:05:30: the 12:05 creation of yesterday is now 24h old
    expect((await service.statistics()).notes_24h).toBe(2);
    expect((await service.statistics()).notes_7d).toBe(3);
  });

  it('when a heartbeat is older than three periods, then health_status reports the component down', async () => {
    const clock = new ManualClock(new Date('2026-03-31T12:00:00Z'));
    const store = new FakeStatsStore();
    const service = new StatsService({ store, clock, heartbeatIntervalMs: 1_000 });
    await store.recordHeartbeat({ service: 'notes', instance: 'a', components: { database: 'healthy', encryption: 'available' }, observedAt: clock.now().getTime() });
    expect((await service.statistics()).health_status.database).toBe('healthy');
    clock.advance(3_001);
    expect((await service.statistics()).health_status).toMatchObject({ database: 'unhealthy', encryption: 'unavailable' });
  });

  describe('when requests overlap', () => {
    /** A store whose counters() read waits until the test opens the gate. */
    class GatedStore extends FakeStatsStore {
      reads = 0;
      failNextRead = false;
      private gates: Array<() => void> = [];
      override async counters() {
        this.reads += 1;
        const fail = this.failNextRead;
        this.failNextRead = false;
        await new Promise<void>((open) => this.gates.push(open));
        if (fail) throw new Error('database went away');
        return super.counters();
      }
      openNext(): void {
        this.gates.shift()?.();
      }
    }
    const created = (store: FakeStatsStore, id: string) =>
      store.applyOnce(eventIdDigest(id), effectOf(event(id, 'note.created', '2026-03-31T12:00:00Z'), Date.parse('2026-03-31T12:00:00Z')), 0);
    const settle = () => new Promise((resolve) => setImmediate(resolve));

    it('then callers who asked during a read share the next read, which starts after they asked', async () => {
      const store = new GatedStore();
      const service = new StatsService({ store, clock: new ManualClock(new Date('2026-03-31T12:00:30Z')), heartbeatIntervalMs: 10_000 });
      const first = service.statistics();
      await settle();
      expect(store.reads).toBe(1);
      await created(store, 'a'); // lands while the first read is under way
      const later = [service.statistics(), service.statistics(), service.statistics()];
      await settle();
      expect(store.reads).toBe(1);
      store.openNext();
      expect((await first).total_notes_created).toBe(1);
      await settle();
      expect(store.reads).toBe(2);
      await created(store, 'b'); // after the following read started: not required in it
      store.openNext();
      const answers = await Promise.all(later);
      expect(answers.map((a) => a.total_notes_created)).toEqual([2, 2, 2]);
      expect(store.reads).toBe(2);
      // Nothing under way any more: the next caller gets a read of its own.
      const alone = service.statistics();
      await settle();
      store.openNext();
      expect((await alone).total_notes_created).toBe(2);
      expect(store.reads).toBe(3);
    });

    it('then a failed read fails only its own callers; the following read still runs', async () => {
      const store = new GatedStore();
      const service = new StatsService({ store, clock: new ManualClock(new Date('2026-03-31T12:00:30Z')), heartbeatIntervalMs: 10_000 });
      store.failNextRead = true;
      const first = service.statistics();
      const second = service.statistics();
      await settle();
      store.openNext();
      await expect(first).rejects.toThrow('database went away');
      await settle();
      store.openNext();
      await expect(second).resolves.toMatchObject({ total_notes_created: 0 });
    });
  });
});

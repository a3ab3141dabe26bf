import { waitFor } from '@vanish/testkit/net';
import { background, sleep, startSystem, type System } from './support/system';

// The fault scenarios back to back, several times over, with the event count checked after each
// sequence: every note whose creation committed is counted by stats exactly once, so every create
// that answered 200 is counted, and nothing twice. Creations whose answer a fault swallowed (a
// SIGKILL, a cut database) may have committed: the notes table says which did, so the check is exact.
// RESILIENCE_SEQUENCES sets how many sequences run (default 2; the check ran 10).
const SEQUENCES = Number(process.env.RESILIENCE_SEQUENCES ?? 2);
/**
 * How long the system may take to settle after a sequence. A dead relay's claimed rows wait for its
 * lease, which is a few seconds and renewed while a relay lives; this bound sits below the 30 s lease
 * the relay once held, so a lease that long fails here instead of passing late.
 */
const SETTLE_BOUND_MS = 25_000;

jest.setTimeout(SEQUENCES * 240_000 + 60_000);

describe('event count: every committed create is counted once, after every sequence of faults', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(async () => {
    await sys?.stop();
  });

  /** Creations in flight from a few lanes at once, as a user burst does. */
  const burst = (lanes: number) => {
    const handles = Array.from({ length: lanes }, (_, lane) => background(() => sys.create({ content: `burst ${lane}`, max_views: 5 }).catch(() => undefined), 20));
    return { stop: () => Promise.all(handles.map((h) => h.stop())) };
  };

  const committedNotes = async () => Number((await sys.sql('notes', 'SELECT COUNT(*) AS n FROM notes'))[0].n);

  /** Waits until outbox and queues are empty and stats' total equals the notes committed; returns how long it took. */
  const settle = async (): Promise<{ ms: number; total: number; committed: number }> => {
    const started = Date.now();
    let last = { total: -1, committed: -1, outbox: -1, busy: '' };
    await waitFor(async () => {
      const [outbox] = await sys.sql('notes', 'SELECT COUNT(*) AS n FROM outbox');
      // Heartbeats that expired while stats was down are dead-lettered by the broker: not events.
      const busy = Object.entries(await sys.queueDepths()).filter(([name, n]) => n > 0 && !/\.heartbeats(\.dlq)?$/.test(name));
      const total = (await sys.stats()).total_notes_created as number;
      last = { total, committed: await committedNotes(), outbox: Number(outbox.n), busy: JSON.stringify(busy) };
      return last.outbox === 0 && busy.length === 0 && last.total === last.committed;
    }, { timeoutMs: SETTLE_BOUND_MS, intervalMs: 500, description: 'outbox drained, queues empty, stats equal to the notes committed' }).catch((err: Error) => {
      throw new Error(`${err.message}; last seen: ${JSON.stringify(last)}`);
    });
    return { ms: Date.now() - started, total: last.total, committed: last.committed };
  };

  for (let sequence = 1; sequence <= SEQUENCES; sequence += 1) {
    it(`sequence ${sequence}: broker cut, database cut, notes and stats SIGKILLed mid-burst, broker stalled; then stats counts every committed create once`, async () => {
      sys.allow5xx = true;

      // The broker is cut while creations go on.
      let traffic = burst(3);
      await sleep(400);
      sys.proxies.amqp.cut();
      await sleep(2_000);
      sys.proxies.amqp.restore();
      await sleep(400);

      // The notes database is cut: creations answer 503 (some may still have committed).
      sys.proxies.notesDb.cut();
      await sleep(3_000);
      sys.proxies.notesDb.restore();
      await waitFor(async () => (await fetch(`${sys.adminUrl.notes}/readyz`)).status === 200, { timeoutMs: 30_000, description: 'notes ready again' });

      // notes dies in the middle of the burst (its relay may hold claimed rows).
      await sleep(300);
      sys.processes.notes.kill('SIGKILL');
      await sys.processes.notes.exited;
      await sys.restart('notes');

      // stats dies in the middle of counting.
      await sleep(300);
      sys.processes.stats.kill('SIGKILL');
      await sys.processes.stats.exited;
      await sys.restart('stats');

      // The broker stalls (a silent network), then comes back.
      await sleep(300);
      sys.proxies.amqp.stall();
      await sleep(2_000);
      sys.proxies.amqp.restore();
      await sleep(300);
      await traffic.stop();

      // One more SIGKILL of notes at the very end, right after a burst, as the last scenario of a run.
      traffic = burst(3);
      await sleep(500);
      sys.processes.notes.kill('SIGKILL');
      await traffic.stop();
      await sys.processes.notes.exited;
      await sys.restart('notes');
      sys.allow5xx = false;

      const answered200 = sys.created.size;
      const { ms, total, committed } = await settle().catch((err: Error) => {
        process.stderr.write(`event-count sequence ${sequence}: creates answered 200 ${answered200}, not settled: ${err.message}\n`);
        throw err;
      });
      process.stderr.write(`event-count sequence ${sequence}: creates answered 200 ${answered200}, committed ${committed}, stats total ${total}, settled in ${ms} ms\n`);
      expect(total).toBe(committed);
      expect(total).toBeGreaterThanOrEqual(answered200);
      // Every 200 is a committed note: none of them is missing from the notes table.
      expect(committed).toBeGreaterThanOrEqual(answered200);
    });
  }
});

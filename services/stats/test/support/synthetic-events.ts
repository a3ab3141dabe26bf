import { randomUUID } from 'node:crypto';
import type { NoteEvent, OutgoingMessage } from '@vanish/common';

export interface Expected {
  total_notes_created: number;
  active_notes: number;
  destroyed_notes: number;
  success_rate: number;
  notes_24h: number;
  notes_7d: number;
  notes_30d: number;
}

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/** A seeded PRNG so a failing stream can be replayed. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const toMessage = (event: NoteEvent): OutgoingMessage => ({ id: event.id, routingKey: event.event, body: JSON.stringify(event) });

/**
 * A stream of note lives as the notes service would emit them: creations spread over the last
 * 40 days (never within 10 minutes of a window edge, so a test may take its time), then views,
 * wrong passcodes and one end per ended note with its was_read. Also returns what the statistics
 * must say, computed here independently of the stats code.
 */
export function syntheticStream(count: number, now: number, seed = 1): { events: NoteEvent[]; expected: Expected } {
  const random = prng(seed);
  const events: NoteEvent[] = [];
  const expected = { total_notes_created: 0, ended: 0, read: 0, notes_24h: 0, notes_7d: 0, notes_30d: 0 };
  const edges = [DAY, 7 * DAY, 30 * DAY];
  const at = (ms: number) => new Date(ms).toISOString();
  const make = (event: NoteEvent['event'], timestamp: number, data: NoteEvent['data']): NoteEvent =>
    ({ id: randomUUID(), event, version: 1, timestamp: at(timestamp), data });
  for (let i = 0; i < count; i += 1) {
    let age: number;
    do {
      age = Math.floor(random() * 40 * DAY);
    } while (edges.some((edge) => Math.abs(edge - age) < 10 * MINUTE));
    const createdAt = now - age;
    const noteRef = `ref-${i}`;
    const expiryType = (['view', 'time', 'both'] as const)[Math.floor(random() * 3)];
    events.push(make('note.created', createdAt, { note_id: noteRef, expiry_type: expiryType }));
    expected.total_notes_created += 1;
    if (age < DAY) expected.notes_24h += 1;
    if (age < 7 * DAY) expected.notes_7d += 1;
    if (age < 30 * DAY) expected.notes_30d += 1;
    const views = Math.floor(random() * 3);
    for (let v = 0; v < views; v += 1) events.push(make('note.accessed', createdAt + 1_000 * (v + 1), { note_id: noteRef }));
    if (random() < 0.2) events.push(make('note.failed_access', createdAt + 500, { note_id: noteRef }));
    const fate = random();
    if (fate < 0.65) {
      const [name, reason] = fate < 0.35 ? ['note.destroyed', 'views'] as const
        : fate < 0.45 ? ['note.destroyed', 'lockout'] as const
        : fate < 0.55 ? ['note.expired', 'time'] as const
        : ['note.expired', 'retention'] as const;
      const wasRead = reason === 'views' || views > 0;
      events.push(make(name, createdAt + 10_000, { note_id: noteRef, reason, was_read: wasRead }));
      expected.ended += 1;
      if (wasRead) expected.read += 1;
    }
  }
  return {
    events,
    expected: {
      total_notes_created: expected.total_notes_created,
      active_notes: expected.total_notes_created - expected.ended,
      destroyed_notes: expected.ended,
      success_rate: expected.ended === 0 ? 100 : Number(((expected.read / expected.ended) * 100).toFixed(2)),
      notes_24h: expected.notes_24h,
      notes_7d: expected.notes_7d,
      notes_30d: expected.notes_30d,
    },
  };
}

/** Reads GET /api/stats.php and returns the stats object (asserting the SPEC 4.3 envelope). */
export async function fetchStats(port: number): Promise<Expected & { health_status: Record<string, string>; generated_at: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/api/stats.php`);
  if (res.status !== 200) throw new Error(`GET /api/stats.php answered ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { success: boolean; stats: Expected & { health_status: Record<string, string>; generated_at: string } };
  if (body.success !== true) throw new Error('success is not true');
  return body.stats;
}

/** The counter fields only (health and generated_at aside). */
export function countersOf(stats: Expected): Expected {
  const { total_notes_created, active_notes, destroyed_notes, success_rate, notes_24h, notes_7d, notes_30d } = stats;
  return { total_notes_created, active_notes, destroyed_notes, success_rate, notes_24h, notes_7d, notes_30d };
}

/** Fisher–Yates with the seeded PRNG: events arrive in any order. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = prng(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

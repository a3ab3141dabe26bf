import { createHash } from 'node:crypto';
import { isNoteEvent, type NoteEvent } from '@vanish/common';
import type { CounterDelta } from './stats-store';

export const MINUTE_MS = 60_000;

export class InvalidNoteEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidNoteEventError';
  }
}

/**
 * Parses and checks a note event envelope (DECISIONS 7). Throws InvalidNoteEventError for
 * anything that can never be counted (not JSON, unknown kind, bad timestamp, an end event
 * without was_read): such a message belongs in the dead-letter queue, not in a retry loop.
 */
export function parseNoteEvent(body: string): NoteEvent {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new InvalidNoteEventError('not JSON');
  }
  if (!isNoteEvent(value)) throw new InvalidNoteEventError('not a note event envelope');
  if (value.id.length === 0 || value.id.length > 200) throw new InvalidNoteEventError('bad event id');
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value.timestamp) || Number.isNaN(Date.parse(value.timestamp))) {
    throw new InvalidNoteEventError('timestamp is not ISO 8601');
  }
  if ((value.event === 'note.expired' || value.event === 'note.destroyed') && typeof value.data.was_read !== 'boolean') {
    throw new InvalidNoteEventError(`${value.event} without was_read`);
  }
  return value;
}

/**
 * What an event changes. Ends (destroyed for any reason, expired) count once each: DECISIONS 6.
 * `appliedAt` (epoch ms) tells a late creation (two or more minutes old) from a current one.
 */
export function effectOf(event: NoteEvent, appliedAt: number): CounterDelta {
  const zero: CounterDelta = { created: 0, ended: 0, endedRead: 0, accessed: 0, failedAccess: 0, lateBucketWrites: 0 };
  switch (event.event) {
    case 'note.created': {
      const createdMinute = Math.floor(Date.parse(event.timestamp) / MINUTE_MS);
      const late = createdMinute <= Math.floor(appliedAt / MINUTE_MS) - 2 ? 1 : 0;
      return { ...zero, created: 1, createdMinute, lateBucketWrites: late };
    }
    case 'note.accessed':
      return { ...zero, accessed: 1 };
    case 'note.failed_access':
      return { ...zero, failedAccess: 1 };
    case 'note.expired':
    case 'note.destroyed':
      return { ...zero, ended: 1, endedRead: event.data.was_read ? 1 : 0 };
    default:
      return zero;
  }
}

/** Seen ids are kept as a digest: no id (whatever its shape) is stored as such. */
export function eventIdDigest(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex').slice(0, 32);
}

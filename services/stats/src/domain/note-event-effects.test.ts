import { effectOf, eventIdDigest, parseNoteEvent } from './note-event-effects';

const envelope = (event: string, data: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => JSON.stringify({
  id: 'e-1', event, version: 1, timestamp: '2026-01-01T10:20:30.000Z', data: { note_id: 'ref-1', ...data }, ...extra,
});

describe('parseNoteEvent and effectOf', () => {
  it('when a note is created, then total and its creation minute count one', () => {
    const effect = effectOf(parseNoteEvent(envelope('note.created', { expiry_type: 'view' })), Date.parse('2026-01-01T10:20:59Z'));
    expect(effect).toEqual({ created: 1, ended: 0, endedRead: 0, accessed: 0, failedAccess: 0, lateBucketWrites: 0, createdMinute: Math.floor(Date.parse('2026-01-01T10:20:00Z') / 60_000) });
  });

  it.each([
    ['note.destroyed', { reason: 'views', was_read: true }, 1],
    ['note.destroyed', { reason: 'lockout', was_read: false }, 0],
    // Ended from the receipt (DECISIONS 12): an end like any other for success_rate (DECISIONS 6).
    ['note.destroyed', { reason: 'creator', was_read: false }, 0],
    ['note.destroyed', { reason: 'creator', was_read: true }, 1],
    ['note.expired', { reason: 'time', was_read: true }, 1],
    ['note.expired', { reason: 'retention', was_read: false }, 0],
  ])('when %s arrives with %o, then one note ended and read-before-end counts %d', (event, data, read) => {
    expect(effectOf(parseNoteEvent(envelope(event, data)), 0)).toMatchObject({ created: 0, ended: 1, endedRead: read });
  });

  it('when a creation is applied two or more minutes after its minute, then it is marked as a late bucket write', () => {
    const event = parseNoteEvent(envelope('note.created'));
    expect(effectOf(event, Date.parse('2026-01-01T10:21:59Z')).lateBucketWrites).toBe(0);
    expect(effectOf(event, Date.parse('2026-01-01T10:22:00Z')).lateBucketWrites).toBe(1);
  });

  it('when accesses and failed accesses arrive, then only their own counters move', () => {
    expect(effectOf(parseNoteEvent(envelope('note.accessed')), 0)).toMatchObject({ accessed: 1, ended: 0, created: 0 });
    expect(effectOf(parseNoteEvent(envelope('note.failed_access')), 0)).toMatchObject({ failedAccess: 1, ended: 0 });
  });

  it.each([
    ['not json', 'not JSON'],
    [JSON.stringify({ id: 'x', event: 'note.created' }), 'envelope'],
    [envelope('note.sold'), 'envelope'],
    [envelope('note.created', {}, { timestamp: 'yesterday' }), 'timestamp'],
    [envelope('note.destroyed', { reason: 'views' }), 'was_read'],
  ])('when the body is %s, then it is rejected as malformed (%s)', (body, why) => {
    expect(() => parseNoteEvent(body)).toThrow(why);
  });

  it('when an id is digested, then the digest is stable, 32 hex characters and not the id', () => {
    const id = '0b7c3e8e-7d2c-4a36-9d1e-3c1c4e2f9a10';
    expect(eventIdDigest(id)).toBe(eventIdDigest(id));
    expect(eventIdDigest(id)).toMatch(/^[0-9a-f]{32}$/);
    expect(eventIdDigest(id)).not.toContain(id.slice(0, 8));
  });
});

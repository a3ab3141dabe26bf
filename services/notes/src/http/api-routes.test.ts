import express from 'express';
import { ServiceUnavailableError, listen, type Listening, type Logger } from '@vanish/common';
import { checkApiAnswer } from '@vanish/testkit/openapi';
import type { CreatedNote, NoteMetadata, NotesApi } from '../domain/notes';
import { redactedPath } from './access-log';
import { createApiRoutes } from './api-routes';

/** A NotesApi whose answers each test sets: the HTTP mapping is tested without a database. */
class ScriptedNotes implements NotesApi {
  create: NotesApi['create'] = async () => { throw new Error('not scripted'); };
  metadata: NotesApi['metadata'] = async () => { throw new Error('not scripted'); };
  reveal: NotesApi['reveal'] = async () => ({ outcome: 'not_found' });
  takedown: NotesApi['takedown'] = async () => false;
}

class RecordingLogger implements Logger {
  readonly entries: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  debug(msg: string, fields?: Record<string, unknown>) { this.entries.push({ level: 'debug', msg, fields }); }
  info(msg: string, fields?: Record<string, unknown>) { this.entries.push({ level: 'info', msg, fields }); }
  warn(msg: string, fields?: Record<string, unknown>) { this.entries.push({ level: 'warn', msg, fields }); }
  error(msg: string, fields?: Record<string, unknown>) { this.entries.push({ level: 'error', msg, fields }); }
  child(): Logger { return this; }
}

const UUID = '0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10';

describe('API routes', () => {
  let notes: ScriptedNotes;
  let logger: RecordingLogger;
  let available: boolean;
  let server: Listening;
  let base: string;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : undefined;
    checkApiAnswer({ method, path, status: res.status, headers: res.headers, body: json ?? text });
    return { status: res.status, headers: res.headers, json, text };
  };

  beforeEach(async () => {
    notes = new ScriptedNotes();
    logger = new RecordingLogger();
    available = true;
    const app = express();
    app.use('/api', createApiRoutes({ notes, logger, isAvailable: () => available, operationTimeoutMs: 100 }));
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.port}`;
  });

  afterEach(async () => { await server.close(); });

  it('when a note is created, then the SPEC 2.2 body formats times as UTC YYYY-MM-DD HH:MM:SS', async () => {
    const created: CreatedNote = {
      uuid: UUID, url: `https://n.example/${UUID}`, expiryType: 'time', expiresAt: new Date('2026-03-04T05:06:07.890Z'),
      maxViews: 100, hasPasscode: true, createdAt: new Date('2026-03-04T04:06:07Z'), receiptUrl: `https://n.example/r/${'R'.repeat(43)}`,
    };
    notes.create = async (input) => {
      expect(input).toMatchObject({ content: 'x', expiryType: 'time', expiryHours: 1 });
      return created;
    };
    const { status, json } = await call('POST', '/api/create.php', { content: 'x', expiry_type: 'time', expiry_time: 1 });
    expect(status).toBe(200);
    expect(json).toEqual({ success: true, uuid: UUID, url: `https://n.example/${UUID}`, expires_at: '2026-03-04 05:06:07', max_views: 100, has_passcode: true, receipt_url: `https://n.example/r/${'R'.repeat(43)}` });
  });

  it('when metadata is read, then SPEC 2.1 fields come back with is_destroyed false', async () => {
    const meta: NoteMetadata = {
      hasPasscode: false, expiryType: 'both', expiresAt: new Date('2026-01-02T00:00:00Z'), maxViews: 4, currentViews: 2,
      createdAt: new Date('2026-01-01T00:00:00Z'),
    };
    notes.metadata = async (uuid) => { expect(uuid).toBe(UUID); return meta; };
    const { json } = await call('GET', `/api/view/${UUID}.php`);
    expect(json.note).toEqual({
      uuid: UUID, has_passcode: false, expiry_type: 'both', expires_at: '2026-01-02 00:00:00', max_views: 4,
      current_views: 2, is_destroyed: false, created_at: '2026-01-01 00:00:00',
    });
  });

  it('when a note has time controls (DECISIONS 16), then creation and metadata add their fields, as the OpenAPI document describes them', async () => {
    notes.create = async (input) => {
      expect(input).toMatchObject({ availableFrom: new Date('2026-03-05T10:00:00Z'), shrinkAfterFirstViewMinutes: 10 });
      return {
        uuid: UUID, url: `https://n.example/${UUID}`, expiryType: 'view', expiresAt: new Date('2026-04-04T05:06:07Z'), maxViews: 5, hasPasscode: false,
        createdAt: new Date('2026-03-04T05:06:07Z'), receiptUrl: `https://n.example/r/${'R'.repeat(43)}`,
        controls: { availableFrom: new Date('2026-03-05T10:00:00Z'), shrinkAfterFirstViewMinutes: 10, releaseState: 'scheduled' },
      };
    };
    const created = await call('POST', '/api/create.php', { content: 'x', max_views: 5, available_from: '2026-03-05T11:00:00+01:00', shrink_after_first_view_minutes: 10 });
    expect(created.json).toMatchObject({ available_from: '2026-03-05 10:00:00', shrink_after_first_view_minutes: 10, release_state: 'scheduled' });
    notes.metadata = async () => ({
      hasPasscode: false, expiryType: 'view', expiresAt: new Date('2026-04-04T05:06:07Z'), maxViews: 5, currentViews: 0, createdAt: new Date('2026-03-04T05:06:07Z'),
      controls: { releaseAfterSilenceHours: 24, releaseState: 'held' },
    });
    const { json } = await call('GET', `/api/view/${UUID}.php`);
    expect(json.note).toMatchObject({ release_after_silence_hours: 24, release_state: 'held' });
    expect(json.note.available_from).toBeUndefined();
  });

  it.each([
    [{ shrink_after_first_view_minutes: 0 }, 'INVALID_SHRINK_AFTER_FIRST_VIEW', 'shrink_after_first_view_minutes'],
    [{ available_from: 'tomorrow' }, 'INVALID_AVAILABLE_FROM', 'available_from'],
    [{ release_after_silence_hours: 1.5 }, 'INVALID_RELEASE_AFTER_SILENCE', 'release_after_silence_hours'],
  ])('when a time control is malformed (%j), then 400 %s in the error shape', async (extra, code, parameter) => {
    const { status, json } = await call('POST', '/api/create.php', { content: 'x', ...extra });
    expect(status).toBe(400);
    expect(json).toMatchObject({ code, details: { parameter } });
  });

  it('when a malformed uuid is asked for, then 404 without asking the domain', async () => {
    notes.metadata = async () => { throw new Error('must not be called'); };
    expect((await call('GET', '/api/view/xyz.php')).json.code).toBe('NOTE_NOT_FOUND');
  });

  it('when the domain fails unexpectedly, then 500 INTERNAL_ERROR with no internals, and the error is logged', async () => {
    notes.create = async () => { throw new Error('boom: SELECT * FROM notes at /app/x.ts:1'); };
    const { status, json, text } = await call('POST', '/api/create.php', { content: 'x' });
    expect(status).toBe(500);
    expect(json).toEqual({ error: 'Internal server error', code: 'INTERNAL_ERROR', details: { parameter: null, message: 'Internal server error' } });
    expect(text).not.toMatch(/boom|SELECT|x\.ts/);
    expect(logger.entries.some((e) => e.level === 'error')).toBe(true);
  });

  it('when the database is unavailable, then 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    notes.metadata = async () => { throw new ServiceUnavailableError('Database unavailable', new Error('ECONNREFUSED 10.0.0.1:3306')); };
    const answer = await call('GET', `/api/view/${UUID}.php`);
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(answer.text).not.toContain('ECONNREFUSED');
  });

  it('when the store is not available yet (migrations pending), then note operations answer 503 and the document still 200', async () => {
    available = false;
    expect((await call('POST', '/api/create.php', { content: 'x' })).status).toBe(503);
    expect((await call('GET', `/api/view/${UUID}.php`)).status).toBe(503);
    expect((await call('GET', '/api/openapi.json')).status).toBe(200);
  });

  it('when a metadata read does not finish by the deadline, then 503 instead of a hang', async () => {
    notes.metadata = () => new Promise(() => undefined);
    const { status, json } = await call('GET', `/api/view/${UUID}.php`);
    expect(status).toBe(503);
    expect(json.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('when a creation takes longer than the deadline, then it is answered with what the store says, not 503 (its COMMIT may be under way)', async () => {
    notes.create = async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return {
        uuid: UUID, url: `http://localhost:8080/${UUID}`, expiryType: 'view', expiresAt: new Date('2026-02-01T00:00:00Z'),
        maxViews: 1, hasPasscode: false, createdAt: new Date('2026-01-01T00:00:00Z'), receiptUrl: 'http://localhost:8080/r/receipt-id',
      };
    };
    const { status, json } = await call('POST', '/api/create.php', { content: 'x' });
    expect(status).toBe(200);
    expect(json.uuid).toBe(UUID);
  });

  it('when a validation error happens, then it is not logged as an error (client mistakes are not incidents)', async () => {
    expect((await call('POST', '/api/create.php', { content: '' })).status).toBe(400);
    expect(logger.entries.filter((e) => e.level === 'error')).toEqual([]);
  });
});

describe('redactedPath', () => {
  it('when a route matched, then only its template is logged', () => {
    expect(redactedPath('/api/view/:uuid.php', `/api/view/${UUID}.php?x=1`)).toBe('/api/view/:uuid.php');
  });

  it('when nothing matched, then uuid-like and long tokens are replaced and the query dropped', () => {
    expect(redactedPath(undefined, `/api/views/${UUID}?t=${UUID}`)).toBe('/api/views/:redacted');
    expect(redactedPath(undefined, `/x/${UUID.toUpperCase()}/y`)).toBe('/x/:redacted/y');
    expect(redactedPath(undefined, '/api/nope')).toBe('/api/nope');
    const escaped = [...UUID].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
    expect(redactedPath(undefined, `/x/${escaped}%E0`)).toBe('/x/:redacted%E0');
  });
});

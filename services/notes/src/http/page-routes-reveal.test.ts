import express from 'express';
import { ManualClock, listen, silentLogger, type Listening } from '@vanish/common';
import type { NoteMetadata, NotesApi, RevealResult } from '../domain/notes';
import { FormTokens, MemoryUsedTokenStore } from './form-tokens';
import { createPageRoutes } from './page-routes';

const UUID = '0b7e4bb1-1d5f-4a0e-9c6a-3f1f9d8e2a10';
const META: NoteMetadata = {
  hasPasscode: true, expiryType: 'view', expiresAt: new Date('2026-02-01T00:00:00Z'), maxViews: 1, currentViews: 0,
  createdAt: new Date('2026-01-01T00:00:00Z'),
};

describe('page routes: the reveal POST', () => {
  let server: Listening;
  let base: string;
  let outcome: RevealResult;
  let meta: NoteMetadata = META;
  const clock = new ManualClock();
  const tokens = new FormTokens(Buffer.alloc(32, 7), new MemoryUsedTokenStore(clock), clock, 60_000);

  beforeEach(async () => {
    const notes: NotesApi = {
      create: async () => { throw new Error('not scripted'); },
      metadata: async () => meta,
      reveal: async () => outcome,
      takedown: async () => false,
    };
    const app = express();
    app.use(createPageRoutes({ notes, formTokens: tokens, publicBaseUrl: 'http://localhost:8080', logger: silentLogger }));
    server = await listen(app, 0, '127.0.0.1');
    base = `http://127.0.0.1:${server.port}`;
  });

  afterEach(async () => { await server.close(); });

  const reveal = (passcode: string) => fetch(`${base}/${UUID}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ passcode, form_token: tokens.issue('reveal', UUID) }).toString(),
  });

  it('when every try left is being checked by other requests, then 429 with Retry-After, the form again, and nothing shown', async () => {
    outcome = { outcome: 'attempts_busy' };
    const res = await reveal('a guess');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    const page = await res.text();
    expect(page).toContain('this try was not counted');
    expect(page).toContain('name="passcode"');
  });

  it('when the passcode is wrong, then 400 with the tries left', async () => {
    outcome = { outcome: 'wrong_passcode', attemptsLeft: 3, lockedOut: false };
    const res = await reveal('a guess');
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('3 tries left');
  });

  it('when the note is not released yet (DECISIONS 16), then 409, the page says when it opens, and it has no form to post', async () => {
    outcome = { outcome: 'not_yet', opensAt: new Date('2026-03-05T10:00:00Z') };
    const res = await reveal('a guess');
    expect(res.status).toBe(409);
    const page = await res.text();
    expect(page).toContain('<p id="note-opens">It opens on March 5, 2026 at 10:00 AM UTC. Come back then.</p>');
    expect(page).not.toContain('name="form_token"');
  });

  it('when a held note\'s page is fetched, then it says it is held and carries no reveal form nor token', async () => {
    meta = { ...META, controls: { releaseAfterSilenceHours: 24, releaseState: 'held' } };
    const res = await fetch(`${base}/${UUID}`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('it opens only if they stop checking in');
    expect(page).not.toContain('name="form_token"');
    meta = META;
  });
});

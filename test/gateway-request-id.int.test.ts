import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createLogger, isAcceptableRequestId } from '@vanish/common';
import { createGatewayService, loadGatewayConfig, type GatewayService } from '@vanish/gateway';
import { createNotesService, loadNotesConfig, type NotesService } from '@vanish/notes';
import { testKey } from './support/api-client';

// The real gateway in front of a real notes app (both in this process, notes on SQLite): the id a
// client sees is the gateway's, sent once, and it is the one notes logged.
jest.setTimeout(60_000);

interface RawAnswer { status: number; requestIdHeaders: Array<[string, string]> }

function get(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on('end', () => {
        const pairs: Array<[string, string]> = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          if (res.rawHeaders[i]!.toLowerCase() === 'x-request-id') pairs.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        }
        resolve({ status: res.statusCode ?? 0, requestIdHeaders: pairs });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function memoryLogger(service: string): { logger: ReturnType<typeof createLogger>; entries(): Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const sink = new Writable({ write(chunk: Buffer, _encoding, done) { lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)); done(); } });
  return { logger: createLogger(service, 'info', sink as never), entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('X-Request-Id through the gateway in front of notes', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vanish-request-id-'));
  const notesLogs = memoryLogger('notes');
  let notes: NotesService;
  let gateway: GatewayService;
  let base: string;

  beforeAll(async () => {
    notes = await createNotesService(loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: `sqlite:${path.join(dataDir, 'notes.db')}`,
      MASTER_KEYS: testKey('k1'), LOOKUP_KEY: testKey(), MAIL_KEYS: testKey('m1'), SWEEP_INTERVAL_MS: '3600000',
    }), { logger: notesLogs.logger });
    const notesPorts = await notes.start();
    gateway = await createGatewayService(loadGatewayConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', NOTES_URL: `http://127.0.0.1:${notesPorts.port}`,
      STATS_URL: 'http://127.0.0.1:9', MAILER_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'info',
    }), { logger: memoryLogger('gateway').logger });
    base = `http://127.0.0.1:${(await gateway.start()).port}`;
  });

  afterAll(async () => {
    await gateway?.stop();
    await notes?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const notesSaw = (id: string) => notesLogs.entries().some((entry) => entry.msg === 'request' && entry.requestId === id);

  it.each([
    ['no id', {}],
    ['a note-shaped id', { 'X-Request-Id': '3f2c8a1e-9b7d-4c2e-8f10-5a6b7c8d9e0f' }],
    ['an id in a shape notes accepts', { 'X-Request-Id': 'client-chosen.id_1' }],
  ])('when a client sends %s, then the relayed answer carries exactly one X-Request-Id, the gateway\'s, the one notes logged', async (_what, headers) => {
    for (const pathname of ['/api/openapi.json', '/']) {
      const answer = await get(`${base}${pathname}`, headers);
      expect(answer.status).toBe(200);
      expect(answer.requestIdHeaders).toHaveLength(1);
      const [[name, id]] = answer.requestIdHeaders as [[string, string]];
      expect(name).toBe('X-Request-Id');
      expect(isAcceptableRequestId(id)).toBe(true);
      if ('X-Request-Id' in headers && isAcceptableRequestId(headers['X-Request-Id'])) expect(id).toBe(headers['X-Request-Id']);
      else expect(id).not.toBe((headers as Record<string, string>)['X-Request-Id']);
      expect(notesSaw(id)).toBe(true);
    }
  });
});

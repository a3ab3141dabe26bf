import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@vanish/common';
import { newKeyPair, sealTo } from '@vanish/envelope/request-seal';
import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { createNotesService, loadNotesConfig, type NotesService } from '../src';
import { send } from './support/api-client';

/** DECISIONS 15 on MariaDB: a count is never exceeded, however many answers arrive at once. */
const KEY = (byte: number) => Buffer.alloc(32, byte).toString('base64');

describe('requests on MariaDB', () => {
  let database: TestDatabase;
  let dataDir: string;
  let service: NotesService;
  let base: string;

  beforeAll(async () => {
    database = await createTestDatabase('vanish_requests');
    dataDir = mkdtempSync(join(tmpdir(), 'notes-requests-mariadb-'));
    const config = loadNotesConfig({
      PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DATABASE_URL: database.url,
      MASTER_KEYS: `k1:${KEY(1)}`, LOOKUP_KEY: KEY(2), MAIL_PUBLIC_KEYS: `m1:${KEY(3)}`, PUBLIC_BASE_URL: 'http://127.0.0.1:1',
    });
    service = await createNotesService(config, { logger: silentLogger, kdf: { N: 1024, r: 8, p: 1 } });
    base = `http://127.0.0.1:${(await service.start()).port}`;
  });

  afterAll(async () => {
    await service?.stop();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when twelve answers race for a count of 3, then exactly three are taken, numbered 1 to 3, and nine are 410 with nothing stored', async () => {
    const pair = await newKeyPair();
    const made = await send(base, 'POST', '/api/request.php', {
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ public_key: pair.publicKey, label: 'race', max_submissions: 3, notification_email: 'a@example.com' }),
    });
    const requestId = new URL(made.json.request_url as string).pathname.slice(3);
    const inboxId = new URL(made.json.inbox_url as string).pathname.slice(3);
    const bodies = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      const sealed = await sealTo(pair.publicKey, `answer ${i}`);
      return JSON.stringify({ content: sealed.content, key_check: sealed.keyCheck });
    }));
    const answers = await Promise.all(bodies.map((body) => send(base, 'POST', `/api/request/${requestId}.php`, { headers: { 'content-type': 'application/json' }, body })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([...new Array(3).fill(200), ...new Array(9).fill(410)]);
    expect(answers.filter((answer) => answer.status === 200).map((answer) => answer.json.submission).sort()).toEqual([1, 2, 3]);
    const inbox = await send(base, 'GET', `/api/inbox/${inboxId}.php`);
    expect([inbox.json.status, inbox.json.submissions.length]).toEqual(['full', 3]);
    const [{ n: notes }] = await service.knex('notes').count({ n: '*' }) as Array<{ n: number }>;
    const [{ n: mails }] = await service.knex('outbox').where({ routing_key: 'mail.send' }).count({ n: '*' }) as Array<{ n: number }>;
    expect([Number(notes), Number(mails)]).toEqual([3, 3]);
  });
});

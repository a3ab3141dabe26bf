import { mkdtempSync, rmSync } from 'node:fs';
import { type Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '@vanish/testkit/net';
import { runProcess } from '@vanish/testkit/process';

/**
 * Issue 7: SIGTERM during load. Every request whose connection the service accepted before the
 * signal is answered normally; the service then exits 0 within its grace period.
 */
const ROOT = resolve(__dirname, '../..');
jest.setTimeout(60_000);

interface Answer { status: number; body: string }

/** Sends a create and resolves `connected` once the request has fully reached the server's socket. */
function create(port: number, content: string, agent: Agent | false): { connected: Promise<void>; answer: Promise<Answer> } {
  let connected!: () => void;
  const connectedPromise = new Promise<void>((done) => { connected = done; });
  const body = JSON.stringify({ content, max_views: 1 });
  const answer = new Promise<Answer>((done, fail) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/create.php', method: 'POST', agent,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => done({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', fail);
    req.end(body, () => connected());
  });
  return { connected: connectedPromise, answer };
}

describe('SIGTERM during load', () => {
  let dataDir: string;
  beforeEach(() => { dataDir = mkdtempSync(join(tmpdir(), 'vanish-sigterm-')); });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('when notes gets SIGTERM with 60 creates sent, then every one of them is answered 200 and it exits 0', async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const notes = await runProcess({
      script: join(ROOT, 'services/notes/dist/main.js'),
      env: {
        NODE_ENV: 'test', PORT: String(port), ADMIN_PORT: String(adminPort), DATA_DIR: dataDir,
        DATABASE_URL: `sqlite:${join(dataDir, 'notes.db')}`, LOG_LEVEL: 'warn', AMQP_URL: undefined, SHUTDOWN_GRACE_MS: '20000',
      },
      readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
    });
    try {
      const inFlight = Array.from({ length: 60 }, (_, i) => create(port, `note ${i}`, false));
      await Promise.all(inFlight.map((r) => r.connected));
      notes.kill('SIGTERM');
      const answers = await Promise.all(inFlight.map((r) => r.answer));
      expect(answers.filter((a) => a.status !== 200)).toEqual([]);
      expect(new Set(answers.map((a) => (JSON.parse(a.body) as { uuid: string }).uuid)).size).toBe(60);
      const exit = await notes.exited;
      expect(exit.code).toBe(0);
      // After the signal the port no longer takes new work.
      await expect(create(port, 'late', false).answer).rejects.toThrow();
    } finally {
      await notes.stop();
    }
  });
});

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@vanish/testkit/net';
import { runProcess } from '@vanish/testkit/process';
import { TEST_LIMITER_KEY } from './support/gateway-harness';
import { send } from './support/http-client';
import { TestUpstream } from './support/test-upstream';

const MAIN = join(__dirname, '..', 'dist', 'main.js');
// Each test starts node on dist/main.js: on a loaded CI machine start-up alone took 3 to 5 s, the
// whole of jest's default 5 s budget, before the behaviour under test began.
jest.setTimeout(30_000);

describe('the gateway as its own process (dist/main.js)', () => {
  const notes = new TestUpstream('notes');

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
    await notes.start();
  });

  afterAll(async () => {
    await notes.stop();
  });

  it('when SIGTERM arrives during a request, then that request completes and the process exits 0', async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const gateway = await runProcess({
      script: MAIN,
      env: { PORT: String(port), ADMIN_PORT: String(adminPort), HOST: '127.0.0.1', LIMITER_KEY: TEST_LIMITER_KEY, NOTES_URL: notes.url, REDIS_URL: undefined, NODE_ENV: 'development' },
      readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
    });
    notes.mode = 'slow';
    try {
      const inFlight = send(`http://127.0.0.1:${port}/api/openapi.json`, { timeoutMs: 5000 });
      await new Promise((resolve) => setTimeout(resolve, 150));
      gateway.kill('SIGTERM');
      const answer = await inFlight;
      expect(answer.status).toBe(200);
      expect(answer.json()).toMatchObject({ slow: true });
      expect(await gateway.exited).toEqual({ code: 0, signal: null });
      expect(gateway.stdout()).toMatch(/"msg":"shutting down"/);
    } finally {
      notes.mode = 'ok';
      if (gateway.exitStatus() === null) await gateway.stop();
    }
  });

  it('when TRUST_PROXY is a /8, then the first lines of its log include one JSON warning naming it, and it serves', async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const gateway = await runProcess({
      script: MAIN,
      env: { PORT: String(port), ADMIN_PORT: String(adminPort), HOST: '127.0.0.1', LIMITER_KEY: TEST_LIMITER_KEY, NOTES_URL: notes.url, REDIS_URL: undefined, NODE_ENV: 'development', TRUST_PROXY: '10.0.0.0/8' },
      readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
    });
    try {
      const lines = gateway.stdout().split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
      const warnings = lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('TRUST_PROXY trusts far more'));
      expect(warnings).toEqual([expect.objectContaining({ level: 'warn', trustProxy: '10.0.0.0/8', reason: '10.0.0.0/8 is a /8 network' })]);
    } finally {
      await gateway.stop();
    }
  });

  it('when NODE_ENV=production sets TRUST_PROXY=true, then it refuses to start and names the variable', () => {
    const env: Record<string, string | undefined> = {
      ...process.env, NODE_ENV: 'production', PORT: '0', ADMIN_PORT: '0', LIMITER_KEY: TEST_LIMITER_KEY, REDIS_URL: 'redis://127.0.0.1:6379', TRUST_PROXY: 'true',
    };
    const result = spawnSync(process.execPath, [MAIN], { env, encoding: 'utf8', timeout: 10_000 });
    expect(result.status).toBe(1);
    // A refused configuration is one JSON line on stdout, like every other line.
    expect(result.stdout).toMatch(/TRUST_PROXY: refused with NODE_ENV=production/);
  });

  it('when NODE_ENV is production without REDIS_URL and LIMITER_KEY, then it refuses to start and names both', async () => {
    const env: Record<string, string | undefined> = { ...process.env, NODE_ENV: 'production', PORT: '0', ADMIN_PORT: '0' };
    for (const name of ['REDIS_URL', 'LIMITER_KEY', 'LIMITER_KEY_FILE']) delete env[name];
    const result = spawnSync(process.execPath, [MAIN], { env, encoding: 'utf8', timeout: 10_000 });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/"msg":"gateway failed to start"/);
    expect(result.stdout).toMatch(/REDIS_URL[\s\S]*LIMITER_KEY/);
  });
});

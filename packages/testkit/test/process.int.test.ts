import path from 'node:path';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { freePort } from '@vanish/testkit/net';

const script = path.join(__dirname, 'fixtures', 'tiny-server.js');

describe('runProcess', () => {
  const started: RunningProcess[] = [];
  afterEach(async () => {
    for (const child of started.splice(0)) {
      child.kill('SIGKILL');
      await child.exited;
    }
  });

  it('when the readiness URL answers 200, then it resolves with the env applied and output captured', async () => {
    const port = await freePort();
    const child = await runProcess({ script, env: { PORT: String(port), GREETING: 'hi' }, readyUrl: `http://127.0.0.1:${port}/readyz` });
    started.push(child);
    const body = await (await fetch(`http://127.0.0.1:${port}/`)).json();
    expect(body).toEqual({ greeting: 'hi' });
    expect(child.stdout()).toContain('"msg":"listening"');
    expect(child.exitStatus()).toBeNull();
  });

  it('when waiting for a log line, then it resolves once the line is printed and stop() ends it with SIGTERM', async () => {
    const child = await runProcess({ script, env: { PORT: '0' }, readyLine: /"msg":"listening"/ });
    started.push(child);
    const line = await child.waitForOutput('listening');
    expect(JSON.parse(line).port).toBeGreaterThan(0);
    const exit = await child.stop();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(child.output()).toContain('stopping');
  });

  it('when the process ignores SIGTERM, then stop() kills it after the bound', async () => {
    const child = await runProcess({ script, env: { PORT: '0', IGNORE_SIGTERM: '1' }, readyLine: 'listening', stopTimeoutMs: 300 });
    started.push(child);
    const exit = await child.stop();
    expect(exit.signal).toBe('SIGKILL');
    expect(child.output()).toContain('ignoring SIGTERM');
  });

  it('when the process exits before it is ready, then it rejects with its exit and output', async () => {
    await expect(runProcess({ script, env: { EXIT_AT_ONCE: '3' }, readyLine: 'listening' })).rejects.toThrow(
      /exited \(code 3.*failing on purpose/s,
    );
  });

  it('when the readiness URL never answers 2xx, then it rejects after the bound and the process is stopped', async () => {
    const port = await freePort();
    await expect(
      runProcess({ script, env: { PORT: String(port), NEVER_READY: '1' }, readyUrl: `http://127.0.0.1:${port}/readyz`, readyTimeoutMs: 500 }),
    ).rejects.toThrow(/not ready within 500 ms \(last: HTTP 503\)/);
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('when kill(signal) is called, then the process gets that signal', async () => {
    const child = await runProcess({ script, env: { PORT: '0' }, readyLine: 'listening' });
    started.push(child);
    child.kill('SIGKILL');
    expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });
});

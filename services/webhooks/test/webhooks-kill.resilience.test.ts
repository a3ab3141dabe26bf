import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, waitFor } from '@vanish/testkit/net';
import { runProcess, type RunningProcess } from '@vanish/testkit/process';
import { startReceiver, type Receiver } from './support/receiver';
import { startWorld, type World } from './support/world';

jest.setTimeout(180_000);

const MAIN = join(__dirname, '..', 'dist', 'main.js');

describe('the webhooks service SIGKILLed mid-delivery (a separate process) and restarted', () => {
  let world: World;
  let receiver: Receiver;
  let child: RunningProcess | undefined;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (this test runs the built service as a process)`);
    receiver = await startReceiver();
    world = await startWorld({ prefix: 'kill', externalWebhooks: true });
  });
  afterAll(async () => {
    await child?.stop();
    await world?.close();
    await receiver?.close();
  });

  const start = async () => {
    const adminPort = await freePort();
    return runProcess({
      script: MAIN,
      env: { ...world.webhooksEnv(), ADMIN_PORT: String(adminPort), LOG_LEVEL: 'warn', NODE_ENV: 'test', WEBHOOK_TIMEOUT_MS: '3000' },
      readyUrl: `http://127.0.0.1:${adminPort}/readyz`,
      readyTimeoutMs: 60_000,
    });
  };

  it('when the process dies while requests are in flight, then after the restart every event arrives and repeats carry the same id and body', async () => {
    child = await start();
    receiver.setMode({ kind: 'stall' });
    const notes = await Promise.all([1, 2, 3, 4, 5].map(() => world.create({ content: 'kill me', webhook_url: receiver.url() })));
    for (const note of notes) await world.reveal(note.uuid, null);
    await waitFor(() => receiver.heldOpen >= 2, { timeoutMs: 60_000, description: 'deliveries in flight' });
    child.kill('SIGKILL');
    await child.exited;
    receiver.setMode({ kind: 'ok' });
    child = await start();
    const refs = new Set(notes.map((n) => n.note_ref));
    const distinct = () => new Set(receiver.received.filter((r) => refs.has(String(r.payload.data.note_ref))).map((r) => r.id));
    // Five one-view notes: five note.accessed and five note.destroyed.
    await waitFor(() => distinct().size >= 10, { timeoutMs: 90_000, description: 'all ten events after the restart' });
    const bodies = new Map<string, string>();
    for (const r of receiver.received) {
      const before = bodies.get(r.id);
      if (before !== undefined) expect(r.body).toBe(before);
      bodies.set(r.id, r.body);
    }
    expect(await world.messagesIn(`${world.queue}.dlq`)).toBeLessThanOrEqual(0);
    const logs = child.output();
    for (const note of notes) expect(logs).not.toContain(note.uuid);
  });
});

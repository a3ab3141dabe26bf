import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { waitFor } from '@vanish/testkit/net';
import { startReceiver, type Receiver } from './support/receiver';
import { metricValue, startWorld, type World } from './support/world';

jest.setTimeout(180_000);

/**
 * Retries (DECISIONS 11) with the delivery records in MariaDB: broker-held delays of 300, 1500 and
 * 4500 ms (±15 % jitter) stand in for the production schedule of about a day; 4 attempts in all.
 * Each gap also holds a timeout, a record and a lookup on the shared database: on a loaded machine
 * those took over a second, so consecutive delays differ by at least two seconds after jitter.
 */
describe('webhooks: retries, dead letters, restarts and slow endpoints', () => {
  let database: TestDatabase;
  let world: World;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    database = await createTestDatabase('vanish_webhooks_retry');
    world = await startWorld({
      prefix: 'retry', webhooksDatabaseUrl: database.url,
      webhooksEnv: { WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_HOST_CONCURRENCY: '2', WEBHOOK_CIRCUIT_FAILURES: '1000', WEBHOOK_RETRY_DELAYS_MS: '300,1500,4500' },
    });
  });
  afterAll(async () => {
    await world?.close();
    for (const r of receivers) await r.close().catch(() => undefined);
    await database?.drop();
  });

  it('when the receiver is down for a while and then up, then every event arrives, each id once, in an order its timestamps restore', async () => {
    const target = await receiver();
    await target.down();
    const note = await world.create({ content: 'patience', max_views: 3, webhook_url: target.url() });
    for (let i = 0; i < 3; i += 1) await world.reveal(note.uuid, null);
    await waitFor(async () => (await metricValue(world.webhooks.registry, 'webhook_delivery_attempts_total', { result: 'error' })) >= 4,
      { timeoutMs: 30_000, description: 'failed attempts while the receiver is down' });
    await target.up();
    await waitFor(() => target.received.length >= 4, { timeoutMs: 30_000, description: 'all four events' });
    const ids = target.received.map((r) => r.id);
    expect(new Set(ids).size).toBe(4);
    const ordered = [...target.received].sort((a, b) => a.payload.timestamp.localeCompare(b.payload.timestamp) || a.payload.event.localeCompare(b.payload.event));
    expect(ordered.map((r) => r.payload.event)).toEqual(['note.accessed', 'note.accessed', 'note.accessed', 'note.destroyed']);
  });

  it.each([
    ['answers 500', { kind: 'status', status: 500 } as const],
    ['holds the connection open past the timeout', { kind: 'stall' } as const],
    // A 204 that comes after the 1 s timeout is not a delivery: the service gave up on it.
    ['answers, but only after the timeout', { kind: 'late', delayMs: 1_500 } as const],
  ])('when the receiver %s, then it gets 4 attempts with growing gaps and the event lands in the dead-letter queue, counted', async (_what, mode) => {
    const target = await receiver();
    target.setMode(mode);
    const deadBefore = await metricValue(world.webhooks.registry, 'webhook_deliveries_total', { outcome: 'dead_letter' });
    const note = await world.create({ content: 'doomed', max_views: 2, webhook_url: target.url() });
    await world.reveal(note.uuid, null);
    await waitFor(async () => (await world.messagesIn(`${world.queue}.dlq`)) >= 1, { timeoutMs: 60_000, description: 'dead letter' });
    expect(target.received).toHaveLength(4);
    expect(new Set(target.received.map((r) => r.id)).size).toBe(1);
    const gaps = target.received.slice(1).map((r, i) => r.at - target.received[i]!.at);
    expect(gaps[1]!).toBeGreaterThan(gaps[0]!);
    expect(gaps[2]!).toBeGreaterThan(gaps[1]!);
    await waitFor(async () => (await metricValue(world.webhooks.registry, 'webhook_deliveries_total', { outcome: 'dead_letter' })) === deadBefore + 1);
    await waitFor(async () => (await metricValue(world.webhooks.registry, 'webhook_queue_depth', { queue: 'dead_letter' })) >= 1,
      { description: 'dead-letter depth in the metrics' });
    const dead = await world.drainDeadLetters();
    expect(dead).toHaveLength(1);
    expect(dead[0]).not.toContain(note.uuid);
  });

  it('when one endpoint stalls, then deliveries to a healthy one are not held up behind it', async () => {
    const stalled = await receiver();
    stalled.setMode({ kind: 'stall' });
    const healthy = await receiver();
    const slow = await Promise.all([1, 2, 3, 4, 5, 6].map(() => world.create({ content: 'slow', webhook_url: stalled.url() })));
    const fast = await Promise.all([1, 2, 3].map(() => world.create({ content: 'fast', webhook_url: healthy.url() })));
    for (const note of slow) await world.reveal(note.uuid, null);
    await waitFor(() => stalled.heldOpen >= 2, { timeoutMs: 30_000, description: 'the stalled endpoint holding requests' });
    for (const note of fast) await world.reveal(note.uuid, null);
    // Each one-view note ends with its reveal: note.accessed and note.destroyed.
    await waitFor(() => healthy.received.length >= 6, { timeoutMs: 30_000, description: 'healthy deliveries' });
    // The cap of 2 per host: the stalled host never held more, and the healthy one was served meanwhile.
    expect(stalled.heldOpen).toBeLessThanOrEqual(2);
    expect(new Set(healthy.received.map((r) => r.payload.data.note_ref))).toEqual(new Set(fast.map((n) => n.note_ref)));
    expect(new Set(healthy.received.map((r) => r.id)).size).toBe(6);
    stalled.setMode({ kind: 'ok' });
  });

  it('when the webhooks service is stopped mid-delivery and started again, then nothing is lost and duplicates carry the same id', async () => {
    const target = await receiver();
    target.setMode({ kind: 'stall' });
    const notes = await Promise.all([1, 2, 3].map(() => world.create({ content: 'restart', webhook_url: target.url() })));
    for (const note of notes) await world.reveal(note.uuid, null);
    await waitFor(() => target.heldOpen >= 1, { timeoutMs: 30_000 });
    await world.restartWebhooks();
    target.setMode({ kind: 'ok' });
    const refs = new Set(notes.map((n) => n.note_ref));
    const distinct = () => new Set(target.received.filter((r) => refs.has(String(r.payload.data.note_ref))).map((r) => r.id)).size;
    // Three one-view notes: three note.accessed and three note.destroyed.
    await waitFor(() => distinct() >= 6, { timeoutMs: 60_000, description: 'all six events after the restart' });
    const byId = new Map<string, string>();
    for (const r of target.received) {
      const previous = byId.get(r.id);
      if (previous !== undefined) expect(r.body).toBe(previous);
      byId.set(r.id, r.body);
    }
  });
});

import { createTestDatabase, type TestDatabase } from '@vanish/testkit/mariadb';
import { waitFor } from '@vanish/testkit/net';
import { ManualClock } from '@vanish/common';
import { ApiChecker } from '@vanish/testkit/openapi';
import { startReceiver, verifySignature, type Received, type Receiver } from './support/receiver';
import { startWorld, type World } from './support/world';

jest.setTimeout(120_000);

/** What the OpenAPI document's `webhooks` section finds wrong with a delivery as the receiver got it. */
const documented = ApiChecker.fromFile();
const undocumented = (r: Received) => documented.webhookProblems({
  headers: { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature }, body: r.body,
});

/**
 * notes → RabbitMQ → webhooks → a local HTTP receiver (DECISIONS 11). Notes keeps its notes in
 * MariaDB, the webhooks service its delivery records in SQLite (and the other way round in the
 * retry file), so both dialects carry the flow.
 */
describe('webhooks: the four SPEC 6 kinds reach the note\'s webhook, signed, with access details', () => {
  let database: TestDatabase;
  let world: World;
  let receiver: Receiver;
  const clock = new ManualClock(new Date());

  beforeAll(async () => {
    database = await createTestDatabase('vanish_webhooks');
    receiver = await startReceiver();
    world = await startWorld({ prefix: 'kinds', notesDatabaseUrl: database.url, notesClock: clock });
  });
  afterAll(async () => {
    await world?.close();
    await receiver?.close();
    await database?.drop();
  });

  it('when a note is read, mistyped, destroyed and another expires, then each event arrives once with the SPEC 6 payload and a valid signature', async () => {
    const read = await world.create({ content: 'read me', passcode: 'pw', max_views: 2, webhook_url: receiver.url('/a') });
    expect(read.status).toBe(200);
    expect(read.note_ref).toMatch(/^[0-9a-f]{32}$/);
    expect(read.webhook_secret).toMatch(/^whsec_/);
    expect(await world.reveal(read.uuid, 'wrong')).toBe(400);
    expect(await world.reveal(read.uuid, 'pw')).toBe(200);
    expect(await world.reveal(read.uuid, 'pw', { ip: '198.51.100.4', userAgent: 'second-reader' })).toBe(200);

    const expiring = await world.create({ content: 'never read', expiry_type: 'time', expiry_time: 1, webhook_url: receiver.url('/b') });
    clock.advance(2 * 3_600_000);

    await waitFor(() => receiver.received.length >= 5, { timeoutMs: 30_000, description: 'five webhooks' });
    const ofRead = receiver.received.filter((r) => r.payload.data.note_ref === read.note_ref);
    expect(ofRead.map((r) => r.payload.event).sort()).toEqual(['note.accessed', 'note.accessed', 'note.destroyed', 'note.failed_access']);
    for (const r of receiver.received) expect({ event: r.payload.event, problems: undocumented(r) }).toEqual({ event: r.payload.event, problems: [] });
    for (const r of ofRead) {
      expect(verifySignature(read.webhook_secret, r)).toBe(true);
      expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Object.keys(r.payload).sort()).toEqual(['data', 'event', 'timestamp']);
      expect(r.payload.data.note_id).toBe(read.uuid);
      expect(r.payload.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    }
    const failed = ofRead.find((r) => r.payload.event === 'note.failed_access')!;
    expect(failed.payload.data.access_details).toEqual({ ip_address: '203.0.113.7', user_agent: 'webhook-test/1.0', access_time: failed.payload.timestamp });
    const destroyed = ofRead.find((r) => r.payload.event === 'note.destroyed')!;
    expect(destroyed.payload.data.reason).toBe('views');
    expect(destroyed.payload.data.access_details).toMatchObject({ ip_address: '198.51.100.4', user_agent: 'second-reader' });

    const [expired] = receiver.received.filter((r) => r.payload.data.note_ref === expiring.note_ref);
    expect(expired!.payload).toEqual({
      event: 'note.expired', timestamp: expired!.payload.timestamp,
      data: { note_id: null, note_ref: expiring.note_ref, reason: 'time', access_details: null },
    });
    expect(verifySignature(expiring.webhook_secret, expired!)).toBe(true);
    expect(verifySignature(read.webhook_secret, expired!)).toBe(false);
    expect(new Set(receiver.received.map((r) => r.id)).size).toBe(receiver.received.length);
  });

  it('when the broker carried those events, then no uuid, address, user agent, URL or secret crossed it in clear', async () => {
    const note = await world.create({ content: 'quiet', webhook_url: receiver.url('/quiet') });
    await world.reveal(note.uuid, null, { ip: '192.0.2.99', userAgent: 'canary-agent' });
    await waitFor(() => receiver.received.some((r) => r.payload.data.note_ref === note.note_ref), { timeoutMs: 30_000 });
    const carried = (await world.drainTap()).join('\n');
    expect(carried).toContain(note.note_ref);
    for (const clear of [note.uuid, '192.0.2.99', 'canary-agent', '/quiet', note.webhook_secret, note.webhook_secret.slice(6)]) {
      expect(carried).not.toContain(clear);
    }
    const metrics = await world.webhooks.registry.metrics();
    for (const clear of [note.uuid, note.note_ref, '127.0.0.1', '/quiet']) expect(metrics).not.toContain(clear);
    const rows = JSON.stringify(await world.webhooks.knex('webhook_deliveries').select());
    for (const clear of [note.uuid, '/quiet', note.webhook_secret]) expect(rows).not.toContain(clear);
  });

  it('when the receiver answers 410 Gone, then that note\'s webhook gets nothing more', async () => {
    const note = await world.create({ content: 'gone', max_views: 3, webhook_url: receiver.url('/gone') });
    receiver.setMode({ kind: 'status', status: 410 });
    await world.reveal(note.uuid, null);
    await waitFor(() => receiver.received.some((r) => r.payload.data.note_ref === note.note_ref), { timeoutMs: 30_000 });
    receiver.setMode({ kind: 'ok' });
    await world.reveal(note.uuid, null);
    const marker = await world.create({ content: 'after', webhook_url: receiver.url('/after') });
    await world.reveal(marker.uuid, null);
    await waitFor(() => receiver.received.some((r) => r.payload.data.note_ref === marker.note_ref), { timeoutMs: 30_000 });
    expect(receiver.received.filter((r) => r.payload.data.note_ref === note.note_ref)).toHaveLength(1);
  });
});

describe('webhooks: operator subscriptions and refusals at registration', () => {
  let world: World;
  let note: Receiver;
  let siem: Receiver;
  const siemSecret = `whsec_${Buffer.alloc(32, 5).toString('base64')}`;

  beforeAll(async () => {
    note = await startReceiver();
    siem = await startReceiver();
    world = await startWorld({
      prefix: 'ops',
      webhooksEnv: { WEBHOOK_SUBSCRIPTIONS: JSON.stringify([{ url: siem.url('/siem'), secret: siemSecret }]) },
    });
  });
  afterAll(async () => {
    await world?.close();
    await note?.close();
    await siem?.close();
  });

  it('when notes are read, then the operator subscription gets every note\'s events with a pseudonym and no client address, signed with its own secret', async () => {
    const hooked = await world.create({ content: 'hooked', webhook_url: note.url() });
    const plain = await world.create({ content: 'plain' });
    await world.reveal(hooked.uuid, null);
    await world.reveal(plain.uuid, null);
    await waitFor(() => siem.received.length >= 4 && note.received.length >= 2, { timeoutMs: 30_000, description: 'operator and note deliveries' });
    for (const r of siem.received) {
      expect(undocumented(r)).toEqual([]);
      expect(verifySignature(siemSecret, r)).toBe(true);
      expect(r.payload.data.note_id).toMatch(/^[0-9a-f]{32}$/);
      expect([hooked.uuid, plain.uuid, hooked.note_ref, plain.note_ref]).not.toContain(r.payload.data.note_id);
      expect(r.payload.data.access_details).toMatchObject({ ip_address: null, user_agent: 'webhook-test/1.0' });
    }
    const pseudonyms = new Set(siem.received.map((r) => r.payload.data.note_id));
    expect(pseudonyms.size).toBe(2);
    // The same event reaches both, under the same webhook-id.
    const noteIds = new Set(note.received.map((r) => r.id));
    expect(siem.received.filter((r) => noteIds.has(r.id))).toHaveLength(2);
  });

  it('when webhook_url is malformed, overlong or not http(s), then creation answers 400 INVALID_WEBHOOK_URL naming the field', async () => {
    for (const url of ['not a url', 'ftp://example.com/x', `https://example.com/${'a'.repeat(2_048)}`, 'https://user:pw@example.com/']) {
      const answer = await world.create({ content: 'x', webhook_url: url });
      expect(answer.status).toBe(400);
      expect(answer).toMatchObject({ code: 'INVALID_WEBHOOK_URL', details: { parameter: 'webhook_url' } });
    }
  });
});

import { randomBytes } from 'node:crypto';
import {
  ConsumerOpener, ConsumerSealer, KeyRing, MAIL_SEAL_PURPOSE, ManualClock, ValidationError, WEBHOOK_SEAL_PURPOSE,
  WEBHOOK_TARGET_SEAL_PURPOSE, publicRingOf, silentLogger, type NoteEvent, type SealedWebhookPart, type WebhookTarget,
} from '@vanish/common';
import { FakeNoteStore } from '../adapters/fakes/fake-note-store';
import { validateCreateNote } from './create-note-validator';
import { NoteCrypto } from './note-crypto';
import { NoteService } from './note-service';
import { NoteWebhooks } from './note-webhooks';

function setUp(options: { production?: boolean; allowPrivate?: boolean; resolveTo?: string[] } = {}) {
  const webhookPrivate = KeyRing.generate('w1');
  const webhookPublic = publicRingOf(webhookPrivate);
  const store = new FakeNoteStore();
  const clock = new ManualClock(new Date('2026-01-01T00:00:00Z'));
  const webhooks = new NoteWebhooks({
    eventSealer: new ConsumerSealer(webhookPublic, WEBHOOK_SEAL_PURPOSE),
    targetSealer: new ConsumerSealer(webhookPublic, WEBHOOK_TARGET_SEAL_PURPOSE),
    requireHttps: options.production ?? false,
    allowPrivateNetworks: options.allowPrivate ?? false,
    resolveHost: async () => options.resolveTo ?? ['93.184.216.34'],
  });
  const service = new NoteService({
    store,
    crypto: new NoteCrypto({ masterKeys: KeyRing.generate('k1'), lookupKey: randomBytes(32), kdf: { N: 1024, r: 8, p: 1 } }),
    mailSealer: new ConsumerSealer(publicRingOf(KeyRing.generate('m1')), MAIL_SEAL_PURPOSE),
    clock,
    publicBaseUrl: 'http://localhost:8080',
    retentionHours: 720,
    logger: silentLogger,
    webhooks,
  });
  const openEvent = new ConsumerOpener(webhookPrivate, WEBHOOK_SEAL_PURPOSE);
  const openTarget = new ConsumerOpener(webhookPrivate, WEBHOOK_TARGET_SEAL_PURPOSE);
  return { service, store, clock, openEvent, openTarget };
}

const create = (overrides: Record<string, unknown> = {}) => validateCreateNote({ content: 'secret text', ...overrides });

async function refusal(promise: Promise<unknown>): Promise<ValidationError> {
  try {
    await promise;
  } catch (err) {
    return err as ValidationError;
  }
  throw new Error('expected a refusal');
}

describe('webhooks on the notes side (DECISIONS 11)', () => {
  it('when a note is created with a webhook_url, then the answer carries note_ref and a whsec_ secret, and the stored target opens only with the webhooks key', async () => {
    const { service, store, openTarget } = setUp();
    const created = await service.create(create({ webhook_url: 'https://hooks.example.com/in' }));
    expect(created.noteRef).toMatch(/^[0-9a-f]{32}$/);
    expect(created.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const outboxText = JSON.stringify(store.outbox);
    expect(outboxText).not.toContain('hooks.example.com');
    expect(outboxText).not.toContain(created.uuid);
    const [record] = [...store.notes.values()];
    const target = JSON.parse(openTarget.open(record!.webhookBox!)) as WebhookTarget;
    expect(target).toEqual({ url: 'https://hooks.example.com/in', secret: created.webhookSecret });
  });

  it('when a note is created without a webhook_url, then the answer has note_ref and no secret', async () => {
    const { service } = setUp();
    const created = await service.create(create());
    expect(created.noteRef).toBeDefined();
    expect(created.webhookSecret).toBeUndefined();
  });

  it.each([
    ['http://hooks.example.com/', 'must use https'],
    ['https://127.0.0.1/', 'public addresses'],
    ['https://10.0.0.8/', 'public addresses'],
    ['https://169.254.169.254/latest/meta-data', 'public addresses'],
    ['https://[::1]/', 'public addresses'],
    ['https://[::ffff:127.0.0.1]/', 'public addresses'],
    ['https://[::127.0.0.1]/', 'public addresses'],
    ['https://[64:ff9b::a9fe:a9fe]/', 'public addresses'],
  ])('when production is given %s, then the creation answers INVALID_WEBHOOK_URL (%s)', async (url, reason) => {
    const { service } = setUp({ production: true });
    const err = await refusal(service.create(create({ webhook_url: url })));
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.code).toBe('INVALID_WEBHOOK_URL');
    expect(err.parameter).toBe('webhook_url');
    expect(err.message).toContain(reason);
  });

  it('when a name resolves to a private address, then the creation is refused', async () => {
    const { service } = setUp({ production: true, resolveTo: ['192.168.0.10'] });
    const err = await refusal(service.create(create({ webhook_url: 'https://internal.example.com/' })));
    expect(err.code).toBe('INVALID_WEBHOOK_URL');
  });

  it('when the webhook_url is malformed or overlong, then the validator refuses it naming the field', () => {
    for (const url of ['not a url', 42, `https://x.example/${'a'.repeat(2_048)}`]) {
      expect(() => create({ webhook_url: url })).toThrow(expect.objectContaining({ code: 'INVALID_WEBHOOK_URL', parameter: 'webhook_url' }));
    }
  });

  it('when a note is revealed and destroyed, then both events carry note_ref and a sealed part with the uuid, access details and target, and nothing in clear', async () => {
    const { service, store, openEvent } = setUp();
    const created = await service.create(create({ webhook_url: 'https://hooks.example.com/in' }));
    const result = await service.reveal(created.uuid, null, null, { ipAddress: '203.0.113.9', userAgent: 'curl/8' });
    expect(result.outcome).toBe('revealed');
    const events = store.outbox.filter((row) => row.routingKey !== 'note.created').map((row) => JSON.parse(row.body) as NoteEvent);
    expect(events.map((event) => event.event)).toEqual(['note.accessed', 'note.destroyed']);
    const outboxText = JSON.stringify(store.outbox);
    for (const clear of [created.uuid, '203.0.113.9', 'curl/8', 'hooks.example.com']) expect(outboxText).not.toContain(clear);
    for (const event of events) {
      expect(event.data.note_ref).toBe(created.noteRef);
      const part = JSON.parse(openEvent.open(event.webhook!)) as SealedWebhookPart;
      expect(part.note_id).toBe(created.uuid);
      expect(part.access_details).toEqual({ ip_address: '203.0.113.9', user_agent: 'curl/8', access_time: event.timestamp });
      expect(part.target).toEqual(expect.any(String));
    }
  });

  it('when a note expires, then note.expired has a sealed part with no uuid and no access details', async () => {
    const { service, store, clock, openEvent } = setUp();
    await service.create(create({ expiry_type: 'time', expiry_time: 1, webhook_url: 'https://hooks.example.com/in' }));
    clock.advance(2 * 3_600_000);
    const { ExpirySweeper } = await import('./expiry-sweeper');
    const webhooks = (service as unknown as { webhooks: NoteWebhooks }).webhooks;
    const sweeper = new ExpirySweeper({ store, clock, intervalMs: 60_000, logger: silentLogger, webhooks });
    expect(await sweeper.sweepOnce()).toBe(1);
    const expired = store.outbox.map((row) => JSON.parse(row.body) as NoteEvent).find((event) => event.event === 'note.expired')!;
    const part = JSON.parse(openEvent.open(expired.webhook!)) as SealedWebhookPart;
    expect(part.note_id).toBeNull();
    expect(part.access_details).toBeNull();
    expect(part.target).not.toBeNull();
  });
});

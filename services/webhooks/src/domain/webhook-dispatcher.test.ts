import {
  ConsumerOpener, ConsumerSealer, KeyRing, ManualClock, PermanentMessageFailure, RetryMessageLater, WEBHOOK_SEAL_PURPOSE,
  WEBHOOK_TARGET_SEAL_PURPOSE, createRegistry, publicRingOf, silentLogger, type SealedWebhookPart,
} from '@vanish/common';
import { createWebhooksMetrics } from '../metrics';
import { HostGuard } from './host-guard';
import type { DeliveryStatus, DeliveryStore, WebhookRequest, WebhookSender } from './ports';
import { WebhookDispatcher } from './webhook-dispatcher';

/** In-memory DeliveryStore for unit tests (the knex one is exercised by the integration tests). */
class MemoryStore implements DeliveryStore {
  records = new Map<string, { status: DeliveryStatus; attempts: number }>();
  gone = new Set<string>();
  async stateOf(eventId: string, noteRef: string) {
    const records = new Map([...this.records].filter(([key]) => key.startsWith(`${eventId}|`)).map(([key, record]) => [key.split('|')[1]!, record]));
    return { records, gone: this.gone.has(noteRef) };
  }
  async record(eventId: string, targetKey: string, status: DeliveryStatus, attempts: number) { this.records.set(`${eventId}|${targetKey}`, { status, attempts }); }
  async markGone(noteRef: string) { this.gone.add(noteRef); }
  async prune() { return 0; }
  async ping() { return true; }
}

function setUp(answer: (request: WebhookRequest) => number) {
  const ring = KeyRing.generate('w1');
  const eventSealer = new ConsumerSealer(publicRingOf(ring), WEBHOOK_SEAL_PURPOSE);
  const targetSealer = new ConsumerSealer(publicRingOf(ring), WEBHOOK_TARGET_SEAL_PURPOSE);
  const sent: WebhookRequest[] = [];
  const sender: WebhookSender = { send: async (request) => { sent.push(request); return { status: answer(request), durationMs: 1 }; } };
  const store = new MemoryStore();
  // One request per host at a time, a short wait: lets a test hold a host busy.
  const hosts = new HostGuard({ concurrency: 1, failureThreshold: 100, openMs: 1000 });
  const dispatcher = new WebhookDispatcher({
    eventOpener: new ConsumerOpener(ring, WEBHOOK_SEAL_PURPOSE),
    targetOpener: new ConsumerOpener(ring, WEBHOOK_TARGET_SEAL_PURPOSE),
    subscriptions: [{ id: 'op:1', url: 'https://siem.example.com/in', secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}`, includeIpAddress: false }],
    pseudonymKey: Buffer.alloc(32, 9),
    sender, store,
    hosts,
    retryDelaysMs: [100, 200],
    circuitDeferMs: 1000,
    hostWaitMs: 50,
    clock: new ManualClock(new Date('2026-01-01T00:00:00Z')),
    logger: silentLogger,
    metrics: createWebhooksMetrics(createRegistry('test', false)),
  });
  const message = (attempt = 1, id = 'e1') => {
    const part: SealedWebhookPart = {
      note_id: '9b2d3f0a-1c2e-4d5f-8a9b-0c1d2e3f4a5b',
      access_details: { ip_address: '203.0.113.5', user_agent: 'ua', access_time: '2026-01-01T00:00:00.000Z' },
      target: targetSealer.seal(JSON.stringify({ url: 'https://hooks.example.com/n', secret: `whsec_${Buffer.alloc(24, 3).toString('base64')}` })),
    };
    const body = JSON.stringify({
      id, event: 'note.accessed', version: 1, timestamp: '2026-01-01T00:00:00.000Z',
      data: { note_id: 'ref1', note_ref: 'ref1' }, webhook: eventSealer.seal(JSON.stringify(part)),
    });
    return { id, routingKey: 'note.accessed', body, attempt };
  };
  /** DECISIONS 15: a request's event, as notes writes it (its part carries only the request's target). */
  const requestMessage = (id = 'r1') => {
    const part: SealedWebhookPart = {
      note_id: null, access_details: null,
      target: targetSealer.seal(JSON.stringify({ url: 'https://hooks.example.com/req', secret: `whsec_${Buffer.alloc(24, 4).toString('base64')}` })),
    };
    const body = JSON.stringify({
      id, event: 'request.submitted', version: 1, timestamp: '2026-01-01T00:00:00.000Z',
      data: { note_id: 'a'.repeat(32), request_ref: 'a'.repeat(32), note_ref: 'b'.repeat(32), submission: 2, submissions_left: 1, size: 99 },
      webhook: eventSealer.seal(JSON.stringify(part)),
    });
    return { id, routingKey: 'request.submitted', body, attempt: 1 };
  };
  return { dispatcher, sent, store, message, requestMessage, hosts };
}

describe('WebhookDispatcher', () => {
  it('when a request.submitted event comes, then only the request\'s webhook gets it, signed, with the references and counts alone', async () => {
    const { dispatcher, sent, requestMessage } = setUp(() => 204);
    await dispatcher.handle(requestMessage());
    expect(sent.map((request) => request.url)).toEqual(['https://hooks.example.com/req']);
    expect(JSON.parse(sent[0]!.body)).toEqual({
      event: 'request.submitted', timestamp: '2026-01-01T00:00:00.000Z',
      data: { request_ref: 'a'.repeat(32), note_ref: 'b'.repeat(32), submission: 2, submissions_left: 1 },
    });
    expect(sent[0]!.headers['webhook-id']).toBe('r1');
  });

  it('when an event has a note webhook and an operator subscription, then the operator gets a pseudonym and no client address', async () => {
    const { dispatcher, sent, message } = setUp(() => 204);
    await dispatcher.handle(message());
    const byUrl = new Map(sent.map((request) => [request.url, JSON.parse(request.body)]));
    expect(byUrl.get('https://hooks.example.com/n').data).toMatchObject({ note_id: '9b2d3f0a-1c2e-4d5f-8a9b-0c1d2e3f4a5b', note_ref: 'ref1' });
    const operator = byUrl.get('https://siem.example.com/in');
    expect(operator.data.note_id).toMatch(/^[0-9a-f]{32}$/);
    expect(operator.data.note_id).not.toBe('ref1');
    expect(operator.data.access_details.ip_address).toBeNull();
    expect(JSON.stringify(operator)).not.toContain('9b2d3f0a');
    for (const request of sent) expect(request.headers['webhook-id']).toBe('e1');
  });

  it('when one target fails, then the message is retried later and only the failed target is sent again', async () => {
    let siemUp = false;
    const { dispatcher, sent, message } = setUp((request) => (request.url.includes('siem') && !siemUp ? 503 : 204));
    await expect(dispatcher.handle(message(1))).rejects.toBeInstanceOf(RetryMessageLater);
    siemUp = true;
    await dispatcher.handle(message(2));
    expect(sent.map((request) => new URL(request.url).host)).toEqual(['hooks.example.com', 'siem.example.com', 'siem.example.com']);
  });

  it('when the last attempt fails, then the message is dead-lettered, counted by recorded attempts', async () => {
    const { dispatcher, message } = setUp(() => 500);
    await expect(dispatcher.handle(message(1))).rejects.toBeInstanceOf(RetryMessageLater);
    await expect(dispatcher.handle(message(2))).rejects.toBeInstanceOf(RetryMessageLater);
    await expect(dispatcher.handle(message(3))).rejects.toBeInstanceOf(PermanentMessageFailure);
  });

  it('when the host is busy past the wait, then the event is deferred without using up an attempt', async () => {
    const { dispatcher, store, message, hosts } = setUp(() => 204);
    const held = [hosts.admit('hooks.example.com'), hosts.admit('siem.example.com')];
    await expect(dispatcher.handle(message(1))).rejects.toMatchObject({ name: 'RetryMessageLater', delayMs: 1000 });
    expect(store.records.size).toBe(0);
    for (const admission of held) if (admission.admitted) admission.release(true);
    await dispatcher.handle(message(2));
    expect([...store.records.values()].map((r) => r.attempts)).toEqual([1, 1]);
  });

  it('when note.created arrives, then nothing is sent', async () => {
    const { dispatcher, sent } = setUp(() => 204);
    await dispatcher.handle({ id: 'c', routingKey: 'note.created', body: '{}', attempt: 1 });
    expect(sent).toHaveLength(0);
  });
});

import { ManualClock, silentLogger } from '@vanish/common';
import { InProcessBus } from '@vanish/bus';
import { Registry } from 'prom-client';
import { FakeStatsStore } from '../adapters/fakes/fake-stats-store';
import { createStatsMetrics } from '../stats-metrics';
import { HeartbeatConsumer, parseHeartbeat } from './heartbeat-consumer';
import { NoteEventsConsumer } from './note-events-consumer';

const envelope = (id: string, event: string, data: Record<string, unknown> = {}) =>
  JSON.stringify({ id, event, version: 1, timestamp: '2026-01-01T00:00:00Z', data: { note_id: 'r', ...data } });

const settle = async (predicate: () => boolean) => {
  for (let i = 0; i < 200 && !predicate(); i += 1) await new Promise((r) => setTimeout(r, 5));
};

describe('NoteEventsConsumer', () => {
  it('when a burst of events and duplicates arrives, then each counts once and the metrics say which were duplicates', async () => {
    const bus = new InProcessBus();
    const store = new FakeStatsStore();
    const registry = new Registry();
    const consumer = new NoteEventsConsumer({ consumer: bus, store, clock: new ManualClock(), logger: silentLogger, metrics: createStatsMetrics(registry) });
    await consumer.start();
    const messages = Array.from({ length: 30 }, (_, i) => ({ id: `e${i}`, routingKey: 'note.created', body: envelope(`e${i}`, 'note.created') }));
    await bus.publish([...messages, ...messages.slice(0, 10)]);
    await settle(() => store.seen.size === 30 && bus.depth(consumer.queueName) === 0);
    await consumer.stop();
    expect((await store.counters()).created).toBe(30);
    expect(await registry.metrics()).toMatch(/stats_events_consumed_total\{event="note.created",outcome="duplicate"\} 10/);
    await bus.close();
  });

  it('when the body is malformed or its kind does not match the routing key, then it is dead-lettered and nothing counts', async () => {
    const bus = new InProcessBus();
    const store = new FakeStatsStore();
    const consumer = new NoteEventsConsumer({ consumer: bus, store, clock: new ManualClock(), logger: silentLogger, metrics: createStatsMetrics(new Registry()) });
    await consumer.start();
    await bus.publish([
      { id: 'a', routingKey: 'note.created', body: 'nope' },
      { id: 'b', routingKey: 'note.created', body: envelope('b', 'note.destroyed', { reason: 'views', was_read: true }) },
    ]);
    await settle(() => bus.deadLetters(consumer.queueName).length === 2);
    await consumer.stop();
    expect(bus.deadLetters(consumer.queueName).map((d) => d.reason)).toEqual(['permanent', 'permanent']);
    expect(await store.counters()).toMatchObject({ created: 0, ended: 0 });
    await bus.close();
  });
});

describe('HeartbeatConsumer', () => {
  const beat = (over: Record<string, unknown> = {}) => JSON.stringify({
    id: 'h', event: 'service.heartbeat', version: 1, timestamp: '2026-01-01T00:00:10Z',
    data: { service: 'notes', instance: 'pod-1', components: { database: 'healthy', encryption: 'available', ip: '10.0.0.1' } }, ...over,
  });

  it('when a heartbeat is read, then only known components are kept and its freshness is its send time capped by its arrival', () => {
    expect(parseHeartbeat(beat(), Date.parse('2026-01-01T00:00:11Z'))).toEqual({
      service: 'notes', instance: 'pod-1', components: { database: 'healthy', encryption: 'available' }, observedAt: Date.parse('2026-01-01T00:00:10Z'),
    });
    expect(parseHeartbeat(beat(), Date.parse('2026-01-01T00:00:05Z')).observedAt).toBe(Date.parse('2026-01-01T00:00:05Z'));
  });

  it('when the store is down, then the heartbeat is dropped (not retried); when it is malformed, it is dead-lettered', async () => {
    const bus = new InProcessBus();
    const store = new FakeStatsStore();
    const consumer = new HeartbeatConsumer({ consumer: bus, store, clock: new ManualClock(new Date('2026-01-01T00:00:11Z')), logger: silentLogger, metrics: createStatsMetrics(new Registry()) });
    await consumer.start();
    store.down = true;
    await bus.publish([{ id: 'h1', routingKey: 'health.notes', body: beat() }, { id: 'h2', routingKey: 'health.notes', body: '{"event":"other"}' }]);
    await settle(() => bus.deadLetters(consumer.queueName).length === 1);
    await consumer.stop();
    expect(bus.deadLetters(consumer.queueName).map((d) => d.message.id)).toEqual(['h2']);
    store.down = false;
    expect(await store.heartbeatsSince(0)).toEqual([]);
    await bus.close();
  });
});

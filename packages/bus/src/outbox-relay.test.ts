import { PartialPublishError, silentLogger, type MessagePublisher, type OutgoingMessage } from '@vanish/common';
import { Registry } from 'prom-client';
import { FakeOutboxStore } from './fake-outbox-store';
import { OutboxRelay } from './outbox-relay';

class FakePublisher implements MessagePublisher {
  readonly sent: OutgoingMessage[] = [];
  down = false;
  async publish(messages: readonly OutgoingMessage[]): Promise<void> {
    if (this.down) throw new Error('broker unreachable');
    this.sent.push(...messages);
  }
}

describe('OutboxRelay', () => {
  it('when rows are waiting, then drain publishes them in order and removes them only after publishing', async () => {
    const store = new FakeOutboxStore();
    const publisher = new FakePublisher();
    for (let i = 0; i < 5; i += 1) store.add('note.created', `{"n":${i}}`);
    const relay = new OutboxRelay({ store, publisher, logger: silentLogger, batchSize: 2 });
    expect(await relay.drain()).toBe(5);
    expect(publisher.sent.map((m) => m.body)).toEqual([0, 1, 2, 3, 4].map((n) => `{"n":${n}}`));
    expect(store.waiting).toBe(0);
  });

  it('when the broker takes only part of a batch, then only the rest is sent again', async () => {
    const store = new FakeOutboxStore();
    store.add('note.created', '{}', 'taken');
    store.add('mail.send', '{}', 'unroutable');
    const sent: string[] = [];
    let refuseMail = true;
    const publisher: MessagePublisher = {
      async publish(messages) {
        sent.push(...messages.map((m) => m.id));
        if (refuseMail && messages.some((m) => m.routingKey === 'mail.send')) {
          throw new PartialPublishError('no queue for mail.send', messages.filter((m) => m.routingKey !== 'mail.send').map((m) => m.id));
        }
      },
    };
    const relay = new OutboxRelay({ store, publisher, logger: silentLogger });
    await expect(relay.drain()).rejects.toThrow('no queue for mail.send');
    expect(store.waiting).toBe(1);
    refuseMail = false;
    expect(await relay.drain()).toBe(1);
    expect(sent).toEqual(['taken', 'unroutable', 'unroutable']);
    expect(store.waiting).toBe(0);
  });

  it('when the broker is down, then rows stay in the outbox and are published once it is back', async () => {
    const store = new FakeOutboxStore();
    const publisher = new FakePublisher();
    store.add('note.created', '{}', 'a');
    publisher.down = true;
    const relay = new OutboxRelay({ store, publisher, logger: silentLogger });
    await expect(relay.drain()).rejects.toThrow('broker unreachable');
    expect(store.waiting).toBe(1);
    publisher.down = false;
    // The relay still holds the claimed rows: it publishes them without waiting for the lease to end.
    expect(await relay.drain()).toBe(1);
    expect(publisher.sent.map((m) => m.id)).toEqual(['a']);
    expect(store.waiting).toBe(0);
  });

  it('when marking fails after the broker confirmed (a crash), then the row is published again later: a duplicate, never a loss', async () => {
    let now = 0;
    const store = new FakeOutboxStore(() => now);
    const publisher = new FakePublisher();
    store.add('note.created', '{}', 'a');
    const relay = new OutboxRelay({ store, publisher, logger: silentLogger, leaseMs: 1_000 });
    store.failNextMark = new Error('database went away');
    await expect(relay.drain()).rejects.toThrow('database went away');
    now += 1_001;
    const restarted = new OutboxRelay({ store, publisher, logger: silentLogger, leaseMs: 1_000 });
    expect(await restarted.drain()).toBe(1);
    expect(publisher.sent.map((m) => m.id)).toEqual(['a', 'a']);
    expect(store.waiting).toBe(0);
  });

  it('when two relays run at once, then a row claimed by one is not published by the other', async () => {
    const store = new FakeOutboxStore();
    const publisher = new FakePublisher();
    for (let i = 0; i < 4; i += 1) store.add('note.created', '{}', `e${i}`);
    const one = new OutboxRelay({ store, publisher, logger: silentLogger, batchSize: 2 });
    const two = new OutboxRelay({ store, publisher, logger: silentLogger, batchSize: 2 });
    await Promise.all([one.drain(), two.drain()]);
    expect(publisher.sent.map((m) => m.id).sort()).toEqual(['e0', 'e1', 'e2', 'e3']);
  });

  it('when started, then it relays rows committed later and reports the backlog in metrics', async () => {
    const store = new FakeOutboxStore();
    const publisher = new FakePublisher();
    const registry = new Registry();
    const relay = new OutboxRelay({ store, publisher, logger: silentLogger, registry, intervalMs: 10, backlogEveryMs: 0 });
    relay.start();
    store.add('note.created', '{}', 'late');
    relay.notify();
    for (let i = 0; i < 100 && publisher.sent.length === 0; i += 1) await new Promise((r) => setTimeout(r, 10));
    await relay.stop();
    expect(publisher.sent.map((m) => m.id)).toEqual(['late']);
    const text = await registry.metrics();
    expect(text).toMatch(/outbox_published_total 1/);
    expect(text).toMatch(/outbox_backlog_messages 0/);
  });

  it('when rows are committed one after another and each notifies, then one round after the linger publishes them together', async () => {
    const store = new FakeOutboxStore();
    const rounds: string[][] = [];
    const publisher: MessagePublisher = { publish: async (messages) => { rounds.push(messages.map((m) => m.id)); } };
    // Fake timers: the linger is what is tested, not how fast this machine runs 5 ms sleeps under load.
    jest.useFakeTimers();
    // A long idle poll, so that only notify() can start a round here.
    const relay = new OutboxRelay({ store, publisher, logger: silentLogger, intervalMs: 60_000, idleIntervalMs: 60_000, lingerMs: 50 });
    relay.start();
    let roundsBeforeLinger: string[][];
    try {
      await jest.advanceTimersByTimeAsync(20); // the first (empty) round has run
      for (const id of ['a', 'b', 'c']) {
        store.add('note.created', '{}', id);
        relay.notify();
        await jest.advanceTimersByTimeAsync(5);
      }
      roundsBeforeLinger = [...rounds];
      await jest.advanceTimersByTimeAsync(100);
    } finally {
      await relay.stop();
      jest.useRealTimers();
    }
    expect(roundsBeforeLinger).toEqual([]);
    expect(rounds).toEqual([['a', 'b', 'c']]);
  });

  describe('leases', () => {
    afterEach(() => jest.useRealTimers());

    /** A publish that waits until released, as a broker that is slow to confirm. */
    const slowPublisher = () => {
      const sent: string[] = [];
      let release: () => void = () => undefined;
      const publisher: MessagePublisher = {
        publish: (messages) => {
          sent.push(...messages.map((m) => m.id));
          return new Promise<void>((resolve) => { release = resolve; });
        },
      };
      return { publisher, sent, confirm: () => release() };
    };

    it('when a relay dies holding claimed rows, then another relay publishes them within seconds, not after a 30 s lease', async () => {
      let now = 0;
      const store = new FakeOutboxStore(() => now);
      store.add('note.created', '{}', 'held-by-the-dead');
      const dead = slowPublisher();
      void new OutboxRelay({ store, publisher: dead.publisher, logger: silentLogger }).drain(); // claimed, never confirmed: the process died
      await new Promise((r) => setImmediate(r));
      expect(dead.sent).toEqual(['held-by-the-dead']);
      const survivor = new FakePublisher();
      const replica = new OutboxRelay({ store, publisher: survivor, logger: silentLogger });
      expect(await replica.drain()).toBe(0); // the lease still runs
      now += 5_001;
      expect(await replica.drain()).toBe(1);
      expect(survivor.sent.map((m) => m.id)).toEqual(['held-by-the-dead']);
    });

    it('when a live relay holds its rows longer than the lease (a slow confirm), then it renews the lease and no other relay takes them', async () => {
      jest.useFakeTimers({ now: 0 });
      const store = new FakeOutboxStore(() => Date.now());
      store.add('note.created', '{}', 'slow');
      const slow = slowPublisher();
      const holder = new OutboxRelay({ store, publisher: slow.publisher, logger: silentLogger, leaseMs: 3_000 });
      const holding = holder.drain();
      const other = new FakePublisher();
      const replica = new OutboxRelay({ store, publisher: other, logger: silentLogger, leaseMs: 3_000 });
      for (let second = 0; second < 10; second += 1) {
        await jest.advanceTimersByTimeAsync(1_000);
        expect(await replica.drain()).toBe(0);
      }
      expect(store.leasedUntil(1)).toBeGreaterThan(Date.now());
      slow.confirm();
      expect(await holding).toBe(1);
      expect(other.sent).toEqual([]);
      expect(slow.sent).toEqual(['slow']);
      expect(store.waiting).toBe(0);
    });

    it('when a relay stops holding rows the broker did not take, then it gives them back at once', async () => {
      const store = new FakeOutboxStore(() => 0); // the clock stands still: only the release frees the rows
      store.add('note.created', '{}', 'a');
      const down = new FakePublisher();
      down.down = true;
      const stopping = new OutboxRelay({ store, publisher: down, logger: silentLogger });
      await expect(stopping.drain()).rejects.toThrow('broker unreachable');
      await stopping.stop();
      const up = new FakePublisher();
      expect(await new OutboxRelay({ store, publisher: up, logger: silentLogger }).drain()).toBe(1);
      expect(up.sent.map((m) => m.id)).toEqual(['a']);
    });

    it('when the delete fails after the broker confirmed, then the next round deletes the rows without publishing them again', async () => {
      const store = new FakeOutboxStore();
      const publisher = new FakePublisher();
      store.add('note.created', '{}', 'a');
      const relay = new OutboxRelay({ store, publisher, logger: silentLogger });
      store.failNextMark = new Error('database went away');
      await expect(relay.drain()).rejects.toThrow('database went away');
      expect(await relay.drain()).toBe(1);
      expect(publisher.sent.map((m) => m.id)).toEqual(['a']);
      expect(store.waiting).toBe(0);
    });
  });
});

import { randomBytes } from 'node:crypto';
import {
  PermanentMessageFailure, RetryMessageLater,
  type IncomingMessage, type MessageConsumer, type MessagePublisher, type Subscription,
} from '@vanish/common';
import { waitFor } from '@vanish/testkit/net';

export interface DeadLetterView {
  id: string;
  routingKey: string;
  body: string;
  reason: string;
}

/** What the suite needs from each implementation, beyond the two ports under test. */
export interface BusHarness {
  bus: MessagePublisher & MessageConsumer;
  /** Reads (and removes, where the transport can) what reached `<queue>.dlq`. */
  deadLetters(queue: string): Promise<DeadLetterView[]>;
  /** Puts a message without an id on the exchange, as a foreign or broken publisher would. */
  publishWithoutId(routingKey: string, body: string): Promise<void>;
  /** Cuts the bus's connection and refuses new ones until restore (transports with a connection only). */
  cut?(): Promise<void>;
  restore?(): Promise<void>;
  /** Drops whatever the suite declared (queues, exchanges) and closes the bus. */
  cleanup(): Promise<void>;
}

export const CONTRACT_RETRY_DELAYS_MS = [30, 60];

const uniqueQueue = (label: string) => `contract.${label}.${randomBytes(3).toString('hex')}`;
const message = (routingKey: string, body: unknown = { n: 1 }, id = randomBytes(8).toString('hex')) =>
  ({ id, routingKey, body: JSON.stringify(body) });

/**
 * The bus contract (STYLE H4), run against InProcessBus and RabbitMqBus: what a publisher and a
 * consumer may count on whichever transport the composition root picked.
 */
export function busContractTests(name: string, makeHarness: () => Promise<BusHarness>, usedQueues: Set<string>): void {
  describe(`${name}: bus contract`, () => {
    let harness: BusHarness;
    const subscriptions: Subscription[] = [];
    const queue = (label: string) => {
      const q = uniqueQueue(label);
      usedQueues.add(q);
      return q;
    };
    const consume = async (...args: Parameters<MessageConsumer['consume']>) => {
      const subscription = await harness.bus.consume(...args);
      subscriptions.push(subscription);
      return subscription;
    };

    beforeAll(async () => {
      harness = await makeHarness();
    });
    afterEach(async () => {
      await Promise.all(subscriptions.splice(0).map((s) => s.cancel()));
    });
    afterAll(async () => {
      await harness?.cleanup();
    });

    it('when messages are published, then each bound queue gets those whose routing key matches its * and # patterns', async () => {
      const starQueue = queue('star');
      const hashQueue = queue('hash');
      const otherQueue = queue('other');
      const byStar: IncomingMessage[] = [];
      const byHash: IncomingMessage[] = [];
      const byOther: IncomingMessage[] = [];
      await consume({ queue: starQueue, bindings: ['ct.*'] }, async (m) => { byStar.push(m); });
      await consume({ queue: hashQueue, bindings: ['ct.#'] }, async (m) => { byHash.push(m); });
      // Every key has some queue: a message no queue takes is held back, not dropped (see the fresh-broker tests).
      await consume({ queue: otherQueue, bindings: ['xx.*'] }, async (m) => { byOther.push(m); });
      const one = message('ct.one', { hello: 'wörld' });
      const deep = message('ct.a.b');
      const other = message('xx.one');
      await harness.bus.publish([one, deep, other]);
      await waitFor(() => byStar.length === 1 && byHash.length === 2 && byOther.length === 1, { description: 'deliveries' });
      expect(byStar[0]).toEqual({ id: one.id, routingKey: 'ct.one', body: one.body, attempt: 1 });
      expect(byHash.map((m) => m.id).sort()).toEqual([one.id, deep.id].sort());
      await new Promise((r) => setTimeout(r, 100));
      expect(byStar).toHaveLength(1);
    });

    it('when a handler asks to retry later, then the message comes back with a higher attempt and is not dead-lettered once it succeeds', async () => {
      const q = queue('retry');
      const attempts: number[] = [];
      await consume({ queue: q, bindings: ['rt.*'], maxAttempts: 5, retryDelaysMs: CONTRACT_RETRY_DELAYS_MS }, async (m) => {
        attempts.push(m.attempt);
        if (m.attempt < 3) throw new RetryMessageLater('not yet');
      });
      await harness.bus.publish([message('rt.x')]);
      await waitFor(() => attempts.length === 3, { description: 'three attempts' });
      expect(attempts).toEqual([1, 2, 3]);
      await new Promise((r) => setTimeout(r, 150));
      expect(attempts).toHaveLength(3);
      expect(await harness.deadLetters(q)).toEqual([]);
    });

    it('when a handler fails maxAttempts times, then the message goes to the dead-letter queue and later messages are still consumed', async () => {
      const q = queue('dlq');
      const seen: IncomingMessage[] = [];
      await consume({ queue: q, bindings: ['dl.*'], maxAttempts: 3, retryDelaysMs: CONTRACT_RETRY_DELAYS_MS }, async (m) => {
        seen.push(m);
        if (m.routingKey === 'dl.bad') throw new Error('boom');
      });
      const bad = message('dl.bad');
      await harness.bus.publish([bad]);
      const dead = await waitFor(async () => { const d = await harness.deadLetters(q); return d.length > 0 ? d : undefined; }, { description: 'dead letter' });
      expect(dead).toEqual([{ id: bad.id, routingKey: 'dl.bad', body: bad.body, reason: 'max-attempts' }]);
      expect(seen.filter((m) => m.id === bad.id).map((m) => m.attempt)).toEqual([1, 2, 3]);
      const good = message('dl.good');
      await harness.bus.publish([good]);
      await waitFor(() => seen.some((m) => m.id === good.id), { description: 'the next message' });
    });

    it('when a handler throws PermanentMessageFailure, then the message is dead-lettered at once', async () => {
      const q = queue('perm');
      const seen: IncomingMessage[] = [];
      await consume({ queue: q, bindings: ['pm.*'], maxAttempts: 5, retryDelaysMs: CONTRACT_RETRY_DELAYS_MS }, async (m) => {
        seen.push(m);
        throw new PermanentMessageFailure('cannot ever work');
      });
      const poison = message('pm.x');
      await harness.bus.publish([poison]);
      const dead = await waitFor(async () => { const d = await harness.deadLetters(q); return d.length > 0 ? d : undefined; }, { description: 'dead letter' });
      expect(dead[0]).toMatchObject({ id: poison.id, reason: 'permanent' });
      expect(seen).toHaveLength(1);
    });

    it('when a message without an id arrives, then it is dead-lettered as malformed without reaching the handler', async () => {
      const q = queue('malformed');
      const seen: IncomingMessage[] = [];
      await consume({ queue: q, bindings: ['mf.*'] }, async (m) => { seen.push(m); });
      await harness.publishWithoutId('mf.x', 'not even json');
      const dead = await waitFor(async () => { const d = await harness.deadLetters(q); return d.length > 0 ? d : undefined; }, { description: 'dead letter' });
      expect(dead[0]).toMatchObject({ body: 'not even json', reason: 'malformed' });
      const next = message('mf.y');
      await harness.bus.publish([next]);
      await waitFor(() => seen.length === 1, { description: 'the next message' });
      expect(seen[0].id).toBe(next.id);
    });

    it('when the same message is delivered twice, then the handler sees both copies (idempotency is the consumer\'s job)', async () => {
      const q = queue('dup');
      const ids: string[] = [];
      await consume({ queue: q, bindings: ['dp.*'] }, async (m) => { ids.push(m.id); });
      const m = message('dp.x');
      await harness.bus.publish([m]);
      await harness.bus.publish([m]);
      await waitFor(() => ids.length === 2, { description: 'two deliveries' });
      expect(ids).toEqual([m.id, m.id]);
    });

    it('when prefetch is 2, then no more than two handlers run at once', async () => {
      const q = queue('prefetch');
      let running = 0;
      let peak = 0;
      let done = 0;
      await consume({ queue: q, bindings: ['pf.*'], prefetch: 2 }, async () => {
        running += 1;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 150));
        running -= 1;
        done += 1;
      });
      await harness.bus.publish(Array.from({ length: 6 }, () => message('pf.x')));
      await waitFor(() => done === 6, { description: 'all handled' });
      expect(peak).toBe(2);
    });

    it('when a subscription is cancelled, then it waits for the handler in flight and receives nothing more', async () => {
      const q = queue('cancel');
      let finished = 0;
      let started = 0;
      const subscription = await consume({ queue: q, bindings: ['cn.*'] }, async () => {
        started += 1;
        await new Promise((r) => setTimeout(r, 100));
        finished += 1;
      });
      await harness.bus.publish([message('cn.x')]);
      await waitFor(() => started === 1, { description: 'handler started' });
      await subscription.cancel();
      expect(finished).toBe(1);
      await harness.bus.publish([message('cn.y')]);
      await new Promise((r) => setTimeout(r, 150));
      expect(started).toBe(1);
    });

    it('when the connection is cut, then publishing rejects fast, and after it returns the bus re-subscribes by itself', async () => {
      if (!harness.cut || !harness.restore) {
        // The in-process bus has no connection to lose; the transports that have one must pass this.
        expect(harness.cut).toBeUndefined();
        return;
      }
      const q = queue('reconnect');
      const ids: string[] = [];
      await consume({ queue: q, bindings: ['rc.*'] }, async (m) => { ids.push(m.id); });
      const before = message('rc.before');
      await harness.bus.publish([before]);
      await waitFor(() => ids.includes(before.id), { description: 'delivery before the cut' });

      await harness.cut();
      const started = Date.now();
      await waitFor(async () => {
        try {
          await harness.bus.publish([message('rc.during')]);
          return false;
        } catch {
          return true;
        }
      }, { description: 'publish rejects while cut', timeoutMs: 15_000 });
      expect(Date.now() - started).toBeLessThan(15_000);

      await harness.restore();
      const after = message('rc.after');
      await waitFor(async () => {
        try {
          await harness.bus.publish([after]);
          return true;
        } catch {
          return false;
        }
      }, { description: 'publish works again', timeoutMs: 30_000, intervalMs: 200 });
      await waitFor(() => ids.includes(after.id), { description: 'delivery after reconnecting', timeoutMs: 30_000 });
    }, 60_000);
  });
}

import { InProcessBus } from '@vanish/bus';
import { busContractTests } from './contract/bus.contract';

// The in-process bus does no I/O; it runs with the integration project so that the contract suite
// covers both implementations side by side.
busContractTests('InProcessBus', async () => {
  const bus = new InProcessBus();
  return {
    bus,
    deadLetters: async (queue) => bus.deadLetters(queue).map((d) => ({
      id: d.message.id, routingKey: d.message.routingKey, body: d.message.body, reason: d.reason,
    })),
    publishWithoutId: (routingKey, body) => bus.publish([{ id: '', routingKey, body }]),
    cleanup: () => bus.close(),
  };
}, new Set());

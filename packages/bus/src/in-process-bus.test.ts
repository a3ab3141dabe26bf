import { InProcessBus } from './in-process-bus';

describe('InProcessBus holding unrouted messages', () => {
  it('when notes publishes before stats has subscribed, then the events reach the queue declared later', async () => {
    const bus = new InProcessBus();
    await bus.publish([{ id: 'early', routingKey: 'note.created', body: '{}' }, { id: 'other', routingKey: 'mail.send', body: '{}' }]);
    const seen: string[] = [];
    await bus.consume({ queue: 'stats.note-events', bindings: ['note.*'] }, async (m) => { seen.push(m.id); });
    for (let i = 0; i < 50 && seen.length === 0; i += 1) await new Promise((r) => setTimeout(r, 5));
    expect(seen).toEqual(['early']);
    const mail: string[] = [];
    await bus.consume({ queue: 'mailer.mail-commands', bindings: ['mail.send'] }, async (m) => { mail.push(m.id); });
    for (let i = 0; i < 50 && mail.length === 0; i += 1) await new Promise((r) => setTimeout(r, 5));
    expect(mail).toEqual(['other']);
    await bus.close();
  });

  it('when maxUnrouted is 0, then an unrouted message is dropped as a broker would', async () => {
    const bus = new InProcessBus({ maxUnrouted: 0 });
    await bus.publish([{ id: 'early', routingKey: 'note.created', body: '{}' }]);
    const seen: string[] = [];
    await bus.consume({ queue: 'q', bindings: ['note.*'] }, async (m) => { seen.push(m.id); });
    await new Promise((r) => setTimeout(r, 50));
    expect(seen).toEqual([]);
    await bus.close();
  });
});

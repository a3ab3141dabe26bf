import { Writable } from 'node:stream';
import { parseJsonLines } from '@vanish/testkit/strict-json';
import { createLogger, maskEmail } from './logger';

function memorySink(): { sink: Writable; text(): string } {
  const chunks: string[] = [];
  return { sink: new Writable({ write(chunk, _enc, done) { chunks.push(String(chunk)); done(); } }), text: () => chunks.join('') };
}

describe('logger', () => {
  it('when fields named like secrets are logged, then their values are redacted', async () => {
    const lines: string[] = [];
    const sink = new Writable({ write(chunk, _enc, done) { lines.push(String(chunk)); done(); } });
    const logger = createLogger('test', 'info', sink);
    logger.info('created', { uuid: 'a1b2c3d4-0000-4000-8000-000000000000', content: 'canary-123', route: '/api/create.php' });
    const line = JSON.parse(lines.join(''));
    expect(line.uuid).toBe('[redacted]');
    expect(line.content).toBe('[redacted]');
    expect(line.route).toBe('/api/create.php');
    expect(line.service).toBe('test');
  });

  it('when a level is below the logger\'s, then isEnabled says so, for children too, and nothing is written at it', () => {
    const { sink, text } = memorySink();
    const logger = createLogger('gateway', 'warn', sink).child('gateway/access');
    expect([logger.isEnabled?.('debug'), logger.isEnabled?.('info'), logger.isEnabled?.('warn'), logger.isEnabled?.('error')]).toEqual([false, false, true, true]);
    logger.info('request');
    expect(text()).toBe('');
    expect(createLogger('gateway', 'info', sink).isEnabled?.('info')).toBe(true);
  });

  it('when children of children log, then each line has one category key, the nested names joined', () => {
    const { sink, text } = memorySink();
    const root = createLogger('all-in-one', 'info', sink);
    root.info('root');
    root.child('notes').info('service');
    root.child('notes').child('notes/access').info('access');
    root.child('notes').child('bus/rabbitmq').info('bus');
    root.child('notes/access').child('notes/access').info('same');
    const lines = parseJsonLines(text());
    expect(lines.map((line) => line.category)).toEqual([undefined, 'notes', 'notes/access', 'notes/bus/rabbitmq', 'notes/access']);
    expect(lines.every((line) => line.service === 'all-in-one')).toBe(true);
  });

  it('when a field is named like a key every line has, then it is kept under another name, never written twice', () => {
    const { sink, text } = memorySink();
    createLogger('notes', 'info', sink).child('notes/http').warn('odd', { service: 'smtp', category: 'x', level: 9, time: 1, msg: 'm', other: 1 });
    const [line] = parseJsonLines(text());
    expect(line).toMatchObject({
      service: 'notes', category: 'notes/http', level: 'warn', msg: 'odd',
      field_service: 'smtp', field_category: 'x', field_level: 9, field_time: 1, field_msg: 'm', other: 1,
    });
  });

  it('when an address is masked, then only its first letters and top-level domain remain', () => {
    expect(maskEmail('alice@example.com')).toBe('a***@e***.com');
    expect(maskEmail('nonsense')).toBe('***');
  });
});

import { Writable } from 'node:stream';
import { createLogger, maskEmail } from './logger';

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

  it('when an address is masked, then only its first letters and top-level domain remain', () => {
    expect(maskEmail('alice@example.com')).toBe('a***@e***.com');
    expect(maskEmail('nonsense')).toBe('***');
  });
});

import { Writable } from 'node:stream';
import { parseJsonLines } from '@vanish/testkit/strict-json';
import { ConfigError } from './config';
import { exitFatally } from './lifecycle';
import { createLogger } from './logger';

function memoryLogger() {
  const chunks: string[] = [];
  const sink = new Writable({ write(chunk, _enc, done) { chunks.push(String(chunk)); done(); } });
  return { logger: createLogger('test', 'info', sink), lines: () => parseJsonLines(chunks.join('')) };
}

describe('exitFatally', () => {
  it('when a start-up fails on configuration, then one error line lists the problems and the exit is 1', () => {
    const { logger, lines } = memoryLogger();
    const exits: number[] = [];
    exitFatally(logger, 'test failed to start', new ConfigError(['DATABASE_URL: expected mysql://', 'AMQP_URL: required']), (code) => exits.push(code));
    expect(exits).toEqual([1]);
    expect(lines()).toEqual([expect.objectContaining({
      level: 'error', msg: 'test failed to start', problems: ['DATABASE_URL: expected mysql://', 'AMQP_URL: required'],
    })]);
  });

  it('when an error quotes something uuid-shaped, then its message and stack are logged without it', () => {
    const { logger, lines } = memoryLogger();
    const uuid = '3F2C8A1E-9B7D-4C2E-8F10-5A6B7C8D9E0F';
    exitFatally(logger, 'uncaught exception', new URIError(`Failed to decode param '${uuid}%E0'`), () => undefined);
    const [line] = lines();
    expect(line).toMatchObject({ level: 'error', errName: 'URIError', err: "Failed to decode param '[redacted]%E0'" });
    expect(String(line!.stack)).toContain('[redacted]');
    expect(JSON.stringify(line)).not.toMatch(/3f2c8a1e/i);
  });
});

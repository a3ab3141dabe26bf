import { ManualClock, type Logger } from '@vanish/common';
import { DeadLetterSweeper, type DeadLetterQueue } from './dead-letter-sweeper';

function recordingLogger(lines: string[]): Logger {
  const logger: Logger = {
    debug: (msg, fields) => lines.push(`${msg} ${JSON.stringify(fields ?? {})}`),
    info: (msg, fields) => lines.push(`${msg} ${JSON.stringify(fields ?? {})}`),
    warn: (msg, fields) => lines.push(`${msg} ${JSON.stringify(fields ?? {})}`),
    error: (msg, fields) => lines.push(`${msg} ${JSON.stringify(fields ?? {})}`),
    child: () => logger,
  };
  return logger;
}

describe('DeadLetterSweeper', () => {
  it('when it sweeps, then the cutoff is now minus the retention and only counts are logged', async () => {
    const cutoffs: Date[] = [];
    const queue: DeadLetterQueue = { dropOlderThan: async (cutoff) => { cutoffs.push(cutoff); return { dropped: 2, kept: 1 }; } };
    const lines: string[] = [];
    const clock = new ManualClock(new Date('2026-11-25T12:00:00Z'));
    await new DeadLetterSweeper({ queue, clock, retentionMs: 7 * 86_400_000, intervalMs: 1000, logger: recordingLogger(lines) }).sweepOnce();
    expect(cutoffs).toEqual([new Date('2026-11-18T12:00:00Z')]);
    expect(lines).toEqual(['dead-lettered mail commands past their retention dropped {"dropped":2,"kept":1}']);
  });

  it('when the broker cannot be reached, then it warns and tries again at the next interval', async () => {
    const lines: string[] = [];
    const queue: DeadLetterQueue = { dropOlderThan: async () => { throw new Error('ECONNREFUSED'); } };
    await new DeadLetterSweeper({ queue, clock: new ManualClock(), retentionMs: 1000, intervalMs: 1000, logger: recordingLogger(lines) }).sweepOnce();
    expect(lines).toEqual(['dead-letter queue not swept {"err":"ECONNREFUSED"}']);
  });
});

import { DependencyUnavailableError, ServiceUnavailableError } from './errors';
import { DependencyState, Outages } from './dependency-state';
import type { Logger } from './logger';

interface Line { level: 'debug' | 'info' | 'warn' | 'error'; msg: string; fields: Record<string, unknown> }

function recordingLogger(): { logger: Logger; lines: Line[]; above(level: 'info'): Line[] } {
  const lines: Line[] = [];
  const at = (level: Line['level']) => (msg: string, fields: Record<string, unknown> = {}) => { lines.push({ level, msg, fields }); };
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return { logger, lines, above: () => lines.filter((line) => line.level !== 'debug') };
}

function fixture(summaryEveryMs = 5_000) {
  let now = 1_000_000;
  const log = recordingLogger();
  const state = new DependencyState({ dependency: 'database', logger: log.logger, now: () => now, summaryEveryMs });
  return { state, log, advance(ms: number) { now += ms; } };
}

describe('DependencyState', () => {
  it('when the dependency fails for 15 s under load, then one error when it goes, a summary at most every 5 s, one info when it is back', () => {
    const { state, log, advance } = fixture();
    state.answered();
    for (let ms = 0; ms < 15_000; ms += 10) {
      state.failed({ requestId: `r${ms}`, err: new ServiceUnavailableError('Database unavailable', new Error('connect ECONNREFUSED 127.0.0.1:3306')) });
      advance(10);
    }
    state.answered();
    state.answered();
    const lines = log.above('info');
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'error', msg: 'database unreachable', fields: { requestId: 'r0', err: 'connect ECONNREFUSED 127.0.0.1:3306' } });
    const summaries = lines.filter((line) => line.level === 'warn');
    expect(summaries).toHaveLength(2);
    expect(summaries[0]!.msg).toBe('database still unreachable: 500 requests failed in the last 5 s');
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'database reachable again', fields: { failed: 1500, downForMs: 15_000 } });
    expect(lines).toHaveLength(4);
    // Every failed request is still there at debug, with its id.
    expect(log.lines.filter((line) => line.level === 'debug')).toHaveLength(1500);
    expect(log.lines.find((line) => line.level === 'debug')?.fields.requestId).toBe('r0');
  });

  it('when no request comes while it is down, then no summary is written (nothing to sum up)', () => {
    const { state, log, advance } = fixture();
    state.failed();
    advance(60_000);
    state.answered();
    expect(log.above('info').map((line) => line.level)).toEqual(['error', 'info']);
  });

  it('when only its driver sees it unreachable, then the outage opens with the driver\'s detail and nothing is counted as failed work', () => {
    const { state, log, advance } = fixture();
    state.seenUnreachable({ task: 'connect', err: 'connect ECONNREFUSED 127.0.0.1:3306' });
    advance(6_000);
    state.seenUnreachable({ task: 'connect', err: 'connect ECONNREFUSED 127.0.0.1:3306' });
    state.failed({ requestId: 'r1' });
    advance(1_000);
    state.answered();
    expect(log.above('info')).toEqual([
      expect.objectContaining({ level: 'error', msg: 'database unreachable', fields: expect.objectContaining({ task: 'connect', failed: 0 }) }),
      expect.objectContaining({ level: 'warn', msg: 'database still unreachable: 1 requests failed in the last 6 s' }),
      expect.objectContaining({ level: 'info', msg: 'database reachable again', fields: expect.objectContaining({ failed: 1, downForMs: 7_000 }) }),
    ]);
  });

  it('when the dependency flaps with every other request, then at most an error and an info line per interval', () => {
    const { state, log, advance } = fixture();
    for (let ms = 0; ms < 20_000; ms += 10) {
      if ((ms / 10) % 2 === 0) state.failed(); else state.answered();
      advance(10);
    }
    const lines = log.above('info');
    expect(lines.filter((line) => line.level === 'error').length).toBeLessThanOrEqual(5);
    expect(lines.filter((line) => line.level === 'info').length).toBeLessThanOrEqual(5);
    // The failures of the quiet lapses are told on the next line, not lost.
    expect(lines.filter((line) => line.level === 'error').slice(1).every((line) => Number(line.fields.failedInBriefLapsesBefore) > 0)).toBe(true);
  });

  it('when it fails again soon after coming back and stays down, then that outage is announced once a summary is due', () => {
    const { state, log, advance } = fixture();
    state.failed();
    advance(1_000);
    state.answered();
    advance(100);
    for (let i = 0; i < 120; i += 1) { state.failed(); advance(100); }
    state.answered();
    expect(log.above('info').map((line) => line.level)).toEqual(['error', 'info', 'error', 'warn', 'info']);
  });

  it('when a dependency is down again long after it came back, then it is a new outage with its own lines', () => {
    const { state, log, advance } = fixture();
    state.failed();
    state.answered();
    advance(60_000);
    state.failed();
    state.answered();
    expect(log.above('info').map((line) => line.level)).toEqual(['error', 'info', 'error', 'info']);
  });

  it('when a fallback answers instead, then the outage opens at warn and the summary counts what was counted', () => {
    let now = 0;
    const log = recordingLogger();
    const state = new DependencyState({ dependency: 'redis', logger: log.logger, now: () => now, downLevel: 'warn', counting: 'limit decisions answered from memory' });
    state.failed();
    for (let i = 0; i < 1234; i += 1) { now += 5; state.failed(); }
    expect(log.above('info').map((line) => [line.level, line.msg])).toEqual([
      ['warn', 'redis unreachable'],
      ['warn', 'redis still unreachable: 1,000 limit decisions answered from memory in the last 5 s'],
    ]);
  });
});

describe('Outages', () => {
  it('when an error names its dependency, then it belongs to that dependency\'s one state; other errors to none', () => {
    const outages = new Outages({ logger: recordingLogger().logger });
    const state = outages.forError(new DependencyUnavailableError('database', 'Database unavailable'));
    expect(state).toBe(outages.of('database'));
    expect(outages.forError(new ServiceUnavailableError('Too many passcode checks at once'))).toBeUndefined();
    expect(outages.forError(new Error('boom'))).toBeUndefined();
  });
});

import { DependencyState, type Logger } from '@vanish/common';
import { knexLog } from './configure-knex';

type Line = [level: string, msg: string, fields: Record<string, unknown> | undefined];

function recording(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => { lines.push([level, msg, fields]); };
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  return { logger, lines };
}

describe('knexLog with the database\'s DependencyState', () => {
  it('when knex cannot make connections, then the outage is told once, and lost connections are debug lines while it lasts', () => {
    const { logger, lines } = recording();
    const outage = new DependencyState({ dependency: 'database', logger, now: () => 0 });
    const log = knexLog(logger, outage)!;
    log.warn!('Connection Error: Error: read ECONNRESET');
    for (let i = 0; i < 50; i += 1) log.warn!('Acquire connection error: Error: connect ECONNREFUSED 127.0.0.1:3306\n    at TCPConnectWrap.afterConnect');
    log.warn!('Connection Error: Error: read ECONNRESET');
    outage.answered();
    const loud = lines.filter(([level]) => level !== 'debug');
    expect(loud.map(([level, msg]) => `${level} ${msg}`)).toEqual([
      'warn database driver warning', // before the outage was known: one pooled connection lost
      'error database unreachable',
      'info database reachable again',
    ]);
    expect(loud[1]![2]).toMatchObject({ task: 'connect', err: 'Acquire connection error: Error: connect ECONNREFUSED 127.0.0.1:3306' });
  });

  it('when a request fails on a connection knex could not make, then that request is counted once, not once more for the driver\'s attempt', () => {
    const { logger, lines } = recording();
    const counted: string[] = [];
    const outage = new DependencyState({ dependency: 'database', logger, now: () => 0, onFailure: (dependency) => counted.push(dependency) });
    const log = knexLog(logger, outage)!;
    for (let request = 0; request < 3; request += 1) {
      log.warn!('Acquire connection error: Error: connect ECONNREFUSED 127.0.0.1:3306');
      outage.failed({ err: new Error('connect ECONNREFUSED 127.0.0.1:3306') });
    }
    outage.answered();
    expect(counted).toEqual(['database', 'database', 'database']);
    expect(lines.find(([, msg]) => msg === 'database reachable again')![2]).toMatchObject({ failed: 3 });
  });

  it('without a state, then every driver warning is a warn line as before', () => {
    const { logger, lines } = recording();
    knexLog(logger)!.warn!('Acquire connection error: Error: connect ECONNREFUSED');
    expect(lines.map(([level]) => level)).toEqual(['warn']);
  });
});

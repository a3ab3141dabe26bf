import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import type { Request, Response } from 'express';
import { createLogger } from '@vanish/common';
import { accessLog } from './access-log';

function sinkLines(): { sink: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const sink = new Writable({ write(chunk, _enc, done) { chunks.push(String(chunk)); done(); } });
  return { sink, lines: () => chunks.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>) };
}

/** A finished answer's events on a stand-in response (the step reads only these fields). */
function exchange(): { req: Request; res: Response & EventEmitter } {
  const res = Object.assign(new EventEmitter(), { locals: { requestId: 'r1', routeName: '/api/stats.php' }, statusCode: 200, writableFinished: true });
  const req = { method: 'GET', path: '/api/stats.php' };
  return { req: req as unknown as Request, res: res as unknown as Response & EventEmitter };
}

describe('access log', () => {
  it('when info lines are on, then one line per request is written when the answer finishes', () => {
    const { sink, lines } = sinkLines();
    const { req, res } = exchange();
    let passed = false;
    accessLog(createLogger('gateway', 'info', sink))(req, res, () => { passed = true; });
    res.emit('finish');
    res.emit('close');
    expect(passed).toBe(true);
    expect(lines()).toEqual([expect.objectContaining({ msg: 'request', requestId: 'r1', route: '/api/stats.php', status: 200 })]);
  });

  it('when the level is warn, then the request passes with no listener on its answer and no line', () => {
    const { sink, lines } = sinkLines();
    const { req, res } = exchange();
    let passed = false;
    accessLog(createLogger('gateway', 'warn', sink))(req, res, () => { passed = true; });
    expect(passed).toBe(true);
    expect(res.listenerCount('finish') + res.listenerCount('close')).toBe(0);
    res.emit('finish');
    expect(lines()).toEqual([]);
  });
});

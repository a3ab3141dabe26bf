import { sameServerInstance, serverInstanceFrom } from './server-instance';

describe('server instances', () => {
  const row = { host: 'db-0', port: 3306, serverId: 1, startedAt: '1795700000' };

  it('when a row is read, then the server is named by host, port and server id, with its start in seconds', () => {
    expect(serverInstanceFrom(row)).toEqual({ server: 'db-0:3306#1', startedAt: 1_795_700_000 });
  });

  it('when the server says nothing of its start, then there is no instance', () => {
    expect(() => serverInstanceFrom(undefined)).toThrow(/started/);
    expect(() => serverInstanceFrom({ ...row, startedAt: null })).toThrow(/started/);
  });

  it('when two readings of one server differ by the clocks\' rounding, then they are the same instance; a restart or another server is not', () => {
    const first = serverInstanceFrom(row);
    expect(sameServerInstance(first, { ...first, startedAt: first.startedAt + 1 })).toBe(true);
    expect(sameServerInstance(first, { ...first, startedAt: first.startedAt - 2 })).toBe(true);
    expect(sameServerInstance(first, { ...first, startedAt: first.startedAt + 5 })).toBe(false);
    expect(sameServerInstance(first, { ...first, server: 'db-1:3306#2' })).toBe(false);
  });
});

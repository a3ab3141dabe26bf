import { databaseDialect, isDatabaseUnavailable } from './configure-knex';

describe('configureKnex helpers', () => {
  it('when DATABASE_URL is sqlite: or mysql://, then the dialect follows; anything else is refused', () => {
    expect(databaseDialect('sqlite:./data/notes.db')).toBe('sqlite');
    expect(databaseDialect('mysql://u:p@db:3306/notes')).toBe('mysql');
    expect(() => databaseDialect('postgres://db/notes')).toThrow(/sqlite:PATH or mysql:/);
  });

  it('when a driver error means the database is down or busy, then it is classed unavailable; a SQL bug is not', () => {
    expect(isDatabaseUnavailable(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('timeout'), { name: 'KnexTimeoutError' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('gone'), { fatal: true }))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'PROTOCOL_CONNECTION_LOST' }) }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error('syntax'), { code: 'ER_PARSE_ERROR' }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('dup'), { code: 'ER_DUP_ENTRY' }))).toBe(false);
    expect(isDatabaseUnavailable(undefined)).toBe(false);
  });
});

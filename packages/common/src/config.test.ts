import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, EnvReader } from './config';

describe('EnvReader', () => {
  it('when values are unset, then the fallbacks are returned and nothing is reported', () => {
    const reader = new EnvReader({});
    expect(reader.int('PORT', 8080, { min: 0, max: 65535 })).toBe(8080);
    expect(reader.bool('REQUIRE_HTTPS', false)).toBe(false);
    expect(reader.str('MAIL_FROM', 'notes@localhost')).toBe('notes@localhost');
    expect(() => reader.done()).not.toThrow();
  });

  it('when several values are invalid, then one error lists every problem', () => {
    const reader = new EnvReader({ PORT: '80a', REQUIRE_HTTPS: 'maybe', MODE: 'x', NOTES_URL: 'not a url' });
    reader.int('PORT', 8080, { min: 0, max: 65535 });
    reader.bool('REQUIRE_HTTPS', false);
    reader.oneOf('MODE', ['a', 'b'] as const, 'a');
    reader.url('NOTES_URL', 'http://127.0.0.1:8081');
    let thrown: unknown;
    try { reader.done(); } catch (err) { thrown = err; }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).problems).toHaveLength(4);
    expect((thrown as ConfigError).message).toContain('PORT');
  });

  it('when an integer is out of range or fractional, then it is a problem', () => {
    const reader = new EnvReader({ A: '70000', B: '1.5' });
    reader.int('A', 1, { min: 0, max: 65535 });
    reader.int('B', 1);
    expect(() => reader.done()).toThrow(/A: .*B: /s);
  });

  it('when NAME_FILE is set, then the secret is read from that file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cfg-'));
    writeFileSync(join(dir, 'secret'), 'from-file\n');
    const reader = new EnvReader({ SECRET: 'from-env', SECRET_FILE: join(dir, 'secret') });
    expect(reader.raw('SECRET')).toBe('from-file');
  });

  it('when production lacks a required value, then it refuses', () => {
    const reader = new EnvReader({ NODE_ENV: 'production' });
    reader.requireInProduction('AMQP_URL', undefined, 'the in-process bus is for laptops');
    expect(() => reader.done()).toThrow(/AMQP_URL/);
  });
});

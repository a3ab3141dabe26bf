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

  it('when production is given an insecure explicit value, then it refuses, naming the variable; elsewhere it accepts', () => {
    const production = new EnvReader({ NODE_ENV: 'production' });
    production.refuseInProduction('REQUIRE_HTTPS', true, 'plain http');
    production.refuseInProduction('TRUST_PROXY', false, 'not insecure');
    expect(() => production.done()).toThrow(new ConfigError(['REQUIRE_HTTPS: refused with NODE_ENV=production (plain http)']));
    const development = new EnvReader({ NODE_ENV: 'development' });
    development.refuseInProduction('REQUIRE_HTTPS', true, 'plain http');
    expect(() => development.done()).not.toThrow();
  });
});

describe('EnvReader.publicBaseUrl', () => {
  const read = (env: Record<string, string>, fallback?: string) => {
    const reader = new EnvReader(env);
    const url = fallback === undefined ? reader.publicBaseUrl() : reader.publicBaseUrl(fallback);
    reader.done();
    return url;
  };

  it('when production is given an http:// PUBLIC_BASE_URL, then it refuses, naming the variable and the override', () => {
    expect(() => read({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'http://vanish.example' }))
      .toThrow(/PUBLIC_BASE_URL: refused with NODE_ENV=production .*ALLOW_INSECURE_PUBLIC_BASE_URL=true/);
    expect(() => read({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'HTTP://vanish.example' })).toThrow(/PUBLIC_BASE_URL/);
  });

  it('when production is given https://, or http:// with ALLOW_INSECURE_PUBLIC_BASE_URL=true, then it accepts (trailing slashes dropped)', () => {
    expect(read({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'https://vanish.example/' })).toBe('https://vanish.example');
    expect(read({ NODE_ENV: 'production', PUBLIC_BASE_URL: 'http://vanish.internal', ALLOW_INSECURE_PUBLIC_BASE_URL: 'true' })).toBe('http://vanish.internal');
  });

  it('when not in production, then http:// is accepted without the override, and the fallback fills an unset value', () => {
    expect(read({ PUBLIC_BASE_URL: 'http://localhost:8080' })).toBe('http://localhost:8080');
    expect(read({ NODE_ENV: 'development' }, 'http://localhost:8080')).toBe('http://localhost:8080');
    expect(read({})).toBeUndefined();
  });

  it('when the override is not a boolean or the URL is not http(s), then each is a problem', () => {
    expect(() => read({ PUBLIC_BASE_URL: 'ftp://x', ALLOW_INSECURE_PUBLIC_BASE_URL: 'maybe' }))
      .toThrow(/ALLOW_INSECURE_PUBLIC_BASE_URL: expected true or false[\s\S]*PUBLIC_BASE_URL: expected a http: or https: URL/);
  });
});

import { ConfigError } from '@vanish/common';
import { loadGatewayConfig, parseTrustProxy } from './config';

const key = Buffer.alloc(32, 1).toString('base64');

describe('loadGatewayConfig', () => {
  it('when nothing but a limiter key is set, then the documented defaults apply', () => {
    const config = loadGatewayConfig({ LIMITER_KEY: key });
    expect(config).toMatchObject({
      port: 8080,
      adminPort: 9080,
      notesUrl: 'http://127.0.0.1:8081',
      statsUrl: 'http://127.0.0.1:8082',
      mailerUrl: 'http://127.0.0.1:8083',
      redisUrl: undefined,
      policy: { windowSeconds: 3600, limits: { create: 10, view: 50, stats: 20 } },
      trustProxy: false,
      corsOrigins: [],
      requireHttps: false,
      tls: undefined,
    });
    expect(config.limiterKey.equals(Buffer.alloc(32, 1))).toBe(true);
  });

  it('when limits and the window are set, then they are used', () => {
    const config = loadGatewayConfig({
      LIMITER_KEY: key,
      RATE_LIMIT_CREATE_PER_HOUR: '3',
      RATE_LIMIT_VIEW_PER_HOUR: '4',
      RATE_LIMIT_STATS_PER_HOUR: '5',
      RATE_LIMIT_WINDOW_SECONDS: '2',
      CORS_ORIGINS: 'https://a.example, https://b.example',
      TRUST_PROXY: 'loopback',
    });
    expect(config.policy).toEqual({ windowSeconds: 2, limits: { create: 3, view: 4, stats: 5 } });
    expect(config.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(config.trustProxy).toBe('loopback');
  });

  it('when values are invalid, then every problem is reported at once', () => {
    let error: unknown;
    try {
      loadGatewayConfig({ LIMITER_KEY: 'short', PORT: 'eighty', CORS_ORIGINS: 'https://a.example/path', TLS_CERT_FILE: '/x.pem', REDIS_URL: 'http://x' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.join('\n');
    expect(problems).toMatch(/LIMITER_KEY/);
    expect(problems).toMatch(/PORT/);
    expect(problems).toMatch(/CORS_ORIGINS/);
    expect(problems).toMatch(/TLS_CERT_FILE and TLS_KEY_FILE/);
    expect(problems).toMatch(/REDIS_URL/);
  });

  it('when production reaches Redis over redis://, then it refuses unless REDIS_ALLOW_PLAINTEXT=true; rediss:// takes REDIS_TLS_CA', () => {
    const env = { NODE_ENV: 'production', LIMITER_KEY: Buffer.alloc(32, 1).toString('base64'), REDIS_URL: 'redis://redis:6379' };
    expect(() => loadGatewayConfig(env)).toThrow(/REDIS_URL: redis:\/\/ is plaintext[\s\S]*REDIS_ALLOW_PLAINTEXT=true/);
    expect(loadGatewayConfig({ ...env, REDIS_ALLOW_PLAINTEXT: 'true' }).redisUrl).toBe('redis://redis:6379');
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    expect(loadGatewayConfig({ ...env, REDIS_URL: 'rediss://redis:6380', REDIS_TLS_CA: pem }).redisTlsCa).toBe(pem);
    expect(() => loadGatewayConfig({ ...env, REDIS_URL: 'rediss://redis:6380', REDIS_TLS_CA: 'not a pem' })).toThrow(/REDIS_TLS_CA: expected PEM/);
  });

  it('when NODE_ENV is production without REDIS_URL or LIMITER_KEY, then it refuses to start', () => {
    expect(() => loadGatewayConfig({ NODE_ENV: 'production' })).toThrow(/REDIS_URL[\s\S]*LIMITER_KEY|LIMITER_KEY[\s\S]*REDIS_URL/);
  });
});

describe('parseTrustProxy', () => {
  it('when unset or false, then proxies are not trusted; hop counts become numbers', () => {
    expect(parseTrustProxy(undefined)).toBe(false);
    expect(parseTrustProxy('false')).toBe(false);
    expect(parseTrustProxy('1')).toBe(1);
    expect(parseTrustProxy('true')).toBe(true);
    expect(parseTrustProxy('10.0.0.0/8, loopback')).toBe('10.0.0.0/8, loopback');
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, silentLogger, type Logger } from '@vanish/common';
import { loadGatewayConfig, parseTrustProxy, trustProxyTooWide } from './config';

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
      upstreamPipelining: 10,
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
      UPSTREAM_PIPELINING: '1',
    });
    expect(config.upstreamPipelining).toBe(1);
    expect(config.policy).toEqual({ windowSeconds: 2, limits: { create: 3, view: 4, stats: 5 } });
    expect(config.corsOrigins).toEqual(['https://a.example', 'https://b.example']);
    expect(config.trustProxy).toBe('loopback');
  });

  it('when values are invalid, then every problem is reported at once', () => {
    let error: unknown;
    try {
      loadGatewayConfig({ LIMITER_KEY: 'short', PORT: 'eighty', CORS_ORIGINS: 'https://a.example/path', TLS_CERT_FILE: '/x.pem', REDIS_URL: 'http://x', UPSTREAM_PIPELINING: '0' });
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
    expect(problems).toMatch(/UPSTREAM_PIPELINING/);
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

  it('when ADMIN_HOST is unset, then the admin port listens where HOST says; set, where it says', () => {
    expect(loadGatewayConfig({ LIMITER_KEY: key, HOST: '0.0.0.0' })).toMatchObject({ host: '0.0.0.0', adminHost: '0.0.0.0' });
    expect(loadGatewayConfig({ LIMITER_KEY: key, ADMIN_HOST: '127.0.0.1' })).toMatchObject({ host: '0.0.0.0', adminHost: '127.0.0.1' });
  });
});

describe('loadGatewayConfig refuses insecure explicit values in production', () => {
  const production = { NODE_ENV: 'production', LIMITER_KEY: key, REDIS_URL: 'rediss://127.0.0.1:6379', PUBLIC_BASE_URL: 'https://vanish.example', REQUIRE_HTTPS: 'true', TRUST_PROXY: '1' };
  const development = { ...production, NODE_ENV: 'development' };

  function problemsOf(env: Record<string, string>): string[] {
    try {
      loadGatewayConfig(env);
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    return [];
  }

  it('when the production environment is secure, then it starts', () => {
    expect(problemsOf(production)).toEqual([]);
  });

  it.each([
    ['REQUIRE_HTTPS', 'false'],
    ['REQUIRE_HTTPS', 'off'],
    ['TRUST_PROXY', 'true'],
    ['PUBLIC_BASE_URL', 'http://vanish.example'],
  ])('when production sets %s=%s, then it refuses, naming the variable; outside production it is accepted', (name, value) => {
    expect(problemsOf({ ...production, [name]: value })).toEqual([expect.stringMatching(new RegExp(`^${name}: refused with NODE_ENV=production \\(`))]);
    expect(problemsOf({ ...development, [name]: value })).toEqual([]);
  });

  it('when production leaves REQUIRE_HTTPS unset, then nothing is refused (only an explicit false is)', () => {
    const { REQUIRE_HTTPS: _unset, ...env } = production;
    expect(problemsOf(env)).toEqual([]);
  });

  it('when production names an http:// PUBLIC_BASE_URL with ALLOW_INSECURE_PUBLIC_BASE_URL=true, then it starts (a private network)', () => {
    expect(problemsOf({ ...production, PUBLIC_BASE_URL: 'http://vanish.internal', ALLOW_INSECURE_PUBLIC_BASE_URL: 'true' })).toEqual([]);
  });

  it('when ALLOW_INSECURE_PUBLIC_BASE_URL=true, then it relaxes nothing but PUBLIC_BASE_URL', () => {
    expect(problemsOf({ ...production, ALLOW_INSECURE_PUBLIC_BASE_URL: 'true', REQUIRE_HTTPS: 'false', TRUST_PROXY: 'true' }))
      .toEqual([expect.stringMatching(/^TRUST_PROXY: refused/), expect.stringMatching(/^REQUIRE_HTTPS: refused/)]);
  });
});

describe('the start-up warning for a TRUST_PROXY that trusts networks', () => {
  function warningsFor(trustProxy: string, nodeEnv = 'development'): Array<{ msg: string; fields?: Record<string, unknown> }> {
    const warnings: Array<{ msg: string; fields?: Record<string, unknown> }> = [];
    const logger: Logger = { ...silentLogger, warn: (msg, fields) => { warnings.push({ msg, fields }); }, child: () => logger };
    loadGatewayConfig({ NODE_ENV: nodeEnv, LIMITER_KEY: key, REDIS_URL: 'rediss://127.0.0.1:6379', TRUST_PROXY: trustProxy }, logger);
    return warnings;
  }

  it.each(['true', '10.0.0.0/8', '10.0.0.0/255.0.0.0', '0.0.0.0/0', 'loopback, 10.0.0.0/8', 'uniquelocal', '2001:db8::/16', '::ffff:10.0.0.0/104'])(
    'when TRUST_PROXY=%s (outside production), then it warns once, naming the value', (value) => {
      const warnings = warningsFor(value);
      expect(warnings).toEqual([{ msg: expect.stringMatching(/^TRUST_PROXY trusts far more than the proxy/), fields: expect.objectContaining({ trustProxy: String(parseTrustProxy(value)) }) }]);
    });

  it('when production trusts a /8, then it starts (the operator decides) but warns', () => {
    expect(warningsFor('10.0.0.0/8', 'production')).toHaveLength(1);
  });

  it.each(['1', '2', 'loopback', 'linklocal', '10.42.7.0/24', '10.0.0.0/9', '192.0.2.10', '2001:db8::/32', '2001:db8::/64', 'false'])(
    'when TRUST_PROXY=%s names the proxy (addresses, a narrow prefix or a hop count), then it does not warn', (value) => {
      expect(warningsFor(value)).toEqual([]);
    });

  it('when the reasons are asked for, then each names what is wide', () => {
    expect(trustProxyTooWide(true)).toBe('true trusts every address');
    expect(trustProxyTooWide('192.0.2.1, 10.0.0.0/8')).toBe('10.0.0.0/8 is a /8 network');
    expect(trustProxyTooWide('10.0.0.0/255.0.0.0')).toBe('10.0.0.0/255.0.0.0 is a /8 network');
    expect(trustProxyTooWide(1)).toBeUndefined();
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

describe('loadGatewayConfig: Redis behind Sentinels', () => {
  const sentinelEnv = { REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26379,[::1]:26380', REDIS_SENTINEL_NAME: 'vanish' };

  it('when REDIS_SENTINELS and REDIS_SENTINEL_NAME are set, then the gateway follows the Sentinels instead of one REDIS_URL', () => {
    const config = loadGatewayConfig({ ...sentinelEnv, REDIS_PASSWORD: 'p' });
    expect(config.redisUrl).toBeUndefined();
    expect(config.redisSentinel).toEqual({
      sentinels: [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26379 }, { host: '::1', port: 26380 }],
      name: 'vanish', password: 'p', tls: false,
    });
  });

  it('when REDIS_SENTINELS lacks a name, has a bad entry, or comes with REDIS_URL, then the configuration is refused naming the variable', () => {
    expect(() => loadGatewayConfig({ REDIS_SENTINELS: '10.0.0.1:26379' })).toThrow(/REDIS_SENTINEL_NAME/);
    expect(() => loadGatewayConfig({ ...sentinelEnv, REDIS_SENTINELS: '10.0.0.1' })).toThrow(/REDIS_SENTINELS: expected host:port/);
    expect(() => loadGatewayConfig({ ...sentinelEnv, REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(/not both/);
  });

  it('when production uses Sentinels without TLS, then it is refused unless REDIS_ALLOW_PLAINTEXT=true', () => {
    const base = { NODE_ENV: 'production', LIMITER_KEY: Buffer.alloc(32, 1).toString('base64'), ...sentinelEnv };
    expect(() => loadGatewayConfig(base)).toThrow(/REDIS_SENTINELS/);
    expect(loadGatewayConfig({ ...base, REDIS_SENTINEL_TLS: 'true' }).redisSentinel?.tls).toBe(true);
    expect(loadGatewayConfig({ ...base, REDIS_ALLOW_PLAINTEXT: 'true' }).redisSentinel?.tls).toBe(false);
  });
});

describe('loadGatewayConfig: Redis Cluster', () => {
  const clusterEnv = { LIMITER_KEY: key, REDIS_CLUSTER_NODES: '10.0.0.1:6379, 10.0.0.2:6379,[fd00::3]:6380' };
  const production = { NODE_ENV: 'production', LIMITER_KEY: Buffer.alloc(32, 1).toString('base64') };

  it('when REDIS_CLUSTER_NODES is set, then the gateway seeds a Redis Cluster client from those nodes, with the password from REDIS_PASSWORD_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-cluster-'));
    const passwordFile = join(dir, 'redis-password');
    writeFileSync(passwordFile, 'from-a-file\n');
    try {
      const config = loadGatewayConfig({ ...clusterEnv, REDIS_PASSWORD_FILE: passwordFile });
      expect(config.redisUrl).toBeUndefined();
      expect(config.redisSentinel).toBeUndefined();
      expect(config.redisCluster).toEqual({
        nodes: [{ host: '10.0.0.1', port: 6379 }, { host: '10.0.0.2', port: 6379 }, { host: 'fd00::3', port: 6380 }],
        password: 'from-a-file', tls: false,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('when REDIS_CLUSTER_NODES has a bad entry, is empty, or comes with REDIS_URL or REDIS_SENTINELS, then the configuration is refused naming the variable', () => {
    expect(() => loadGatewayConfig({ LIMITER_KEY: key, REDIS_CLUSTER_NODES: '10.0.0.1:6379,10.0.0.2' })).toThrow(/REDIS_CLUSTER_NODES: expected host:port entries, comma-separated, got "10.0.0.2"/);
    expect(() => loadGatewayConfig({ LIMITER_KEY: key, REDIS_CLUSTER_NODES: '10.0.0.1:70000' })).toThrow(/REDIS_CLUSTER_NODES: expected host:port/);
    expect(() => loadGatewayConfig({ LIMITER_KEY: key, REDIS_CLUSTER_NODES: ' , ' })).toThrow(/REDIS_CLUSTER_NODES: no cluster node given/);
    expect(() => loadGatewayConfig({ ...clusterEnv, REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(/REDIS_URL .*REDIS_CLUSTER_NODES .*not both/);
    expect(() => loadGatewayConfig({ ...clusterEnv, REDIS_SENTINELS: '10.0.0.1:26379', REDIS_SENTINEL_NAME: 'v' })).toThrow(/REDIS_SENTINELS .*REDIS_CLUSTER_NODES .*not both/);
  });

  it('when production uses a Redis Cluster without TLS, then it is refused unless REDIS_ALLOW_PLAINTEXT=true; with it, no REDIS_URL is required', () => {
    expect(() => loadGatewayConfig({ ...production, ...clusterEnv })).toThrow(/REDIS_CLUSTER_NODES.*plaintext without REDIS_CLUSTER_TLS=true/);
    expect(loadGatewayConfig({ ...production, ...clusterEnv, REDIS_CLUSTER_TLS: 'true' }).redisCluster?.tls).toBe(true);
    expect(loadGatewayConfig({ ...production, ...clusterEnv, REDIS_ALLOW_PLAINTEXT: 'true' }).redisCluster?.tls).toBe(false);
    expect(() => loadGatewayConfig(production)).toThrow(/REDIS_URL: required .*REDIS_CLUSTER_NODES/);
  });
});

import { ConfigError } from '@vanish/common';
import { loadStatsConfig } from './config';

describe('loadStatsConfig', () => {
  it('when nothing is set, then the embedded defaults apply (ports 8082/9082, SQLite in DATA_DIR, no AMQP)', () => {
    const config = loadStatsConfig({ DATA_DIR: '/var/lib/vanish-stats-config' });
    expect(config).toMatchObject({
      port: 8082, adminPort: 9082, databaseUrl: 'sqlite:/var/lib/vanish-stats-config/stats.db', amqpUrl: undefined,
      amqpExchange: 'vanish', queuePrefix: '', heartbeatIntervalMs: 10_000, eventIdRetentionHours: 168, production: false,
    });
  });

  it('when production runs on the embedded defaults, then it refuses, naming DATABASE_URL and AMQP_URL', () => {
    let caught: unknown;
    try {
      loadStatsConfig({ NODE_ENV: 'production' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems.join('\n');
    expect(problems).toMatch(/DATABASE_URL/);
    expect(problems).toMatch(/AMQP_URL/);
  });

  it('when production has a MySQL URL and a broker, then it starts', () => {
    const config = loadStatsConfig({
      NODE_ENV: 'production', DATABASE_URL: 'mysql://stats:pw@db:3306/stats?ssl-mode=VERIFY_CA', AMQP_URL: 'amqps://u:p@mq:5671', PORT: '0',
      HEARTBEAT_INTERVAL_MS: '2000', EVENT_ID_RETENTION_HOURS: '24',
    });
    expect(config).toMatchObject({ port: 0, production: true, heartbeatIntervalMs: 2000, eventIdRetentionHours: 24 });
  });

  it('when production reaches MySQL or RabbitMQ in plaintext, then it refuses naming both, unless the named opt-outs are set', () => {
    const env = { NODE_ENV: 'production', DATABASE_URL: 'mysql://stats:pw@db:3306/stats', AMQP_URL: 'amqp://u:p@mq:5672' };
    expect(() => loadStatsConfig(env)).toThrow(/DATABASE_URL: connects to MySQL without TLS[\s\S]*AMQP_URL: amqp:\/\/ is plaintext/);
    expect(loadStatsConfig({ ...env, DATABASE_ALLOW_PLAINTEXT: 'true', AMQP_ALLOW_PLAINTEXT: 'true' }).production).toBe(true);
  });

  it('when values are invalid, then every problem is reported at once', () => {
    expect(() => loadStatsConfig({ PORT: 'x', DATABASE_URL: 'postgres://x', HEARTBEAT_INTERVAL_MS: '5', AMQP_URL: 'http://x' }))
      .toThrow(/PORT[\s\S]*DATABASE_URL[\s\S]*AMQP_URL|PORT[\s\S]*AMQP_URL[\s\S]*DATABASE_URL|DATABASE_URL[\s\S]*AMQP_URL/);
    try {
      loadStatsConfig({ PORT: 'x', DATABASE_URL: 'postgres://x', HEARTBEAT_INTERVAL_MS: '5', AMQP_URL: 'http://x' });
    } catch (err) {
      expect((err as ConfigError).problems).toHaveLength(4);
    }
  });
});

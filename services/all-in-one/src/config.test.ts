import { ADMIN_LISTEN, ConfigError, ListenError, PUBLIC_LISTEN } from '@vanish/common';
import { asOperatorSetIt, loadAllInOneConfig, serviceEnv } from './config';

describe('loadAllInOneConfig', () => {
  it('when nothing is set, then the ports are those of DECISIONS 10 and each service has its own SQLite file in DATA_DIR', () => {
    const config = loadAllInOneConfig({ DATA_DIR: '/data' });
    expect(config.ports).toEqual({
      gateway: { port: 8080, adminPort: 9080 },
      notes: { port: 8081, adminPort: 9081 },
      stats: { port: 8082, adminPort: 9082 },
      mailer: { port: 8083, adminPort: 9083 },
      webhooks: { port: 9084, adminPort: 9084 },
    });
    expect(config.databaseUrls).toEqual({
      notes: 'sqlite:/data/notes.db',
      stats: 'sqlite:/data/stats.db',
      mailer: 'sqlite:/data/mailer.db',
      webhooks: 'sqlite:/data/webhooks.db',
    });
  });

  it('when NOTES_DATABASE_URL, STATS_DATABASE_URL or MAILER_DATABASE_URL is set, then that service uses it', () => {
    const config = loadAllInOneConfig({ DATA_DIR: '/data', NOTES_DATABASE_URL: 'mysql://root@127.0.0.1:3306/n', MAILER_DATABASE_URL: 'sqlite:/elsewhere/m.db' });
    expect(config.databaseUrls.notes).toBe('mysql://root@127.0.0.1:3306/n');
    expect(config.databaseUrls.stats).toBe('sqlite:/data/stats.db');
    expect(config.databaseUrls.mailer).toBe('sqlite:/elsewhere/m.db');
  });

  it('when NODE_ENV=production, then it refuses with a message that says why and what to do instead', () => {
    expect(() => loadAllInOneConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadAllInOneConfig({ NODE_ENV: 'production' })).toThrow(/all-in-one process .* is for a laptop only/);
  });

  it('when two services are given the same port, then it refuses, naming both', () => {
    expect(() => loadAllInOneConfig({ PORT: '8081' })).toThrow('ports: notes port and gateway port are both 8081');
  });

  it('when ports are 0, then they may repeat (ephemeral)', () => {
    expect(loadAllInOneConfig({ PORT: '0', NOTES_PORT: '0' }).ports.gateway.port).toBe(0);
  });
});

describe('serviceEnv', () => {
  const config = loadAllInOneConfig({
    DATA_DIR: '/data', NOTES_PORT: '7001', PORT: '7000', AMQP_URL: 'amqp://x', DATABASE_URL: 'mysql://root@h/whatever',
    MASTER_KEYS: 'k1:abc', NOTES_URL: 'http://elsewhere',
  });

  it('when building a backing service env, then it gets its own PORT, ADMIN_PORT and DATABASE_URL, no AMQP_URL, and the shared variables', () => {
    const env = serviceEnv(config, 'notes');
    expect(env.PORT).toBe('7001');
    expect(env.ADMIN_PORT).toBe('9081');
    expect(env.DATABASE_URL).toBe('sqlite:/data/notes.db');
    expect(env.AMQP_URL).toBeUndefined();
    expect(env.MASTER_KEYS).toBe('k1:abc');
    expect(env.DATA_DIR).toBe('/data');
  });

  it('when HOST is set for the process, then only the gateway\'s public port follows it: notes, stats, mailer and every admin port stay on loopback', () => {
    const exposed = loadAllInOneConfig({ DATA_DIR: '/data', HOST: '0.0.0.0', ADMIN_HOST: '0.0.0.0' });
    for (const name of ['notes', 'stats', 'mailer'] as const) {
      expect({ name, host: serviceEnv(exposed, name).HOST, adminHost: serviceEnv(exposed, name).ADMIN_HOST }).toEqual({ name, host: '127.0.0.1', adminHost: undefined });
    }
    expect(serviceEnv(exposed, 'gateway')).toMatchObject({ HOST: '0.0.0.0', ADMIN_HOST: '127.0.0.1' });
    expect(serviceEnv(loadAllInOneConfig({ DATA_DIR: '/data' }), 'gateway').HOST).toBeUndefined();
  });

  it('when building the gateway env, then it points at the given upstreams and has no database', () => {
    const env = serviceEnv(config, 'gateway', { notes: 'http://127.0.0.1:7001' });
    expect(env.PORT).toBe('7000');
    expect(env.NOTES_URL).toBe('http://127.0.0.1:7001');
    expect(env.STATS_URL).toBeUndefined();
    expect(env.DATABASE_URL).toBeUndefined();
  });
});

describe('asOperatorSetIt', () => {
  const refusal = (names: typeof PUBLIC_LISTEN) => new ListenError('EADDRINUSE', '127.0.0.1', 8081, names);

  it.each([
    ['notes', PUBLIC_LISTEN, 'NOTES_PORT', undefined],
    ['stats', ADMIN_LISTEN, 'STATS_ADMIN_PORT', undefined],
    ['mailer', PUBLIC_LISTEN, 'MAILER_PORT', undefined],
    ['webhooks', ADMIN_LISTEN, 'WEBHOOKS_ADMIN_PORT', undefined],
    ['gateway', PUBLIC_LISTEN, 'PORT', 'HOST'],
    ['gateway', { port: 'ADMIN_PORT', host: 'ADMIN_HOST' }, 'ADMIN_PORT', undefined],
  ] as const)('when %s refuses %j, then the refusal names %s (the variable the all-in-one reads)', (service, names, port, host) => {
    const renamed = asOperatorSetIt(service, refusal(names)) as ListenError;
    expect(renamed.names).toEqual({ port, host });
    expect(renamed.message).toContain(`set ${port} to a free port`);
  });

  it('when the failure is something else, then it passes through', () => {
    const other = new Error('disk full');
    expect(asOperatorSetIt('notes', other)).toBe(other);
  });
});

import { resolve } from 'node:path';
import { ConfigError, EnvReader, ListenError, type Env, type ListenSettingNames, type LogLevel } from '@vanish/common';

export type ServiceName = 'notes' | 'stats' | 'mailer' | 'webhooks' | 'gateway';

export interface ServicePorts {
  port: number;
  adminPort: number;
}

export interface AllInOneConfig {
  dataDir: string;
  logLevel: LogLevel;
  shutdownGraceMs: number;
  ports: Readonly<Record<ServiceName, ServicePorts>>;
  /** Each backing service's own database (DECISIONS 10): its own SQLite file unless overridden. */
  databaseUrls: Readonly<Record<Exclude<ServiceName, 'gateway'>, string>>;
  /** The environment every service starts from (the process's, minus what the all-in-one sets per service). */
  baseEnv: Env;
}

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** Public/admin ports per DECISIONS 10; the gateway keeps PORT/ADMIN_PORT, the others get prefixed names. */
const DEFAULT_PORTS: Record<ServiceName, ServicePorts> = {
  gateway: { port: 8080, adminPort: 9080 },
  notes: { port: 8081, adminPort: 9081 },
  stats: { port: 8082, adminPort: 9082 },
  mailer: { port: 8083, adminPort: 9083 },
  // The webhooks service has no public traffic: only its admin port listens.
  webhooks: { port: 9084, adminPort: 9084 },
};

/** The variables that set each service's ports here: the gateway keeps PORT/ADMIN_PORT, the others are prefixed. */
export const PORT_VARIABLES: Readonly<Record<ServiceName, { port: string; adminPort: string }>> = {
  gateway: { port: 'PORT', adminPort: 'ADMIN_PORT' },
  notes: { port: 'NOTES_PORT', adminPort: 'NOTES_ADMIN_PORT' },
  stats: { port: 'STATS_PORT', adminPort: 'STATS_ADMIN_PORT' },
  mailer: { port: 'MAILER_PORT', adminPort: 'MAILER_ADMIN_PORT' },
  webhooks: { port: 'WEBHOOKS_ADMIN_PORT', adminPort: 'WEBHOOKS_ADMIN_PORT' },
};

export const PRODUCTION_REFUSAL =
  'NODE_ENV=production: the all-in-one process runs every service on embedded defaults (SQLite, in-process bus, ' +
  'file mail, generated keys) and is for a laptop only. In production start each service on its own ' +
  '(node services/<name>/dist/main.js, or its container) with DATABASE_URL, AMQP_URL, SMTP_URL and the keys set.';

/**
 * The all-in-one `npm start`: reads only what it decides itself (ports of the four services, the
 * per-service database URLs, DATA_DIR, LOG_LEVEL); each service then loads its own config from the
 * environment the all-in-one hands it (see serviceEnv).
 */
export function loadAllInOneConfig(env: Env = process.env): Readonly<AllInOneConfig> {
  const reader = new EnvReader(env);
  if (reader.isProduction) throw new ConfigError([PRODUCTION_REFUSAL]);
  const dataDir = resolve(reader.str('DATA_DIR', './data'));
  const portOf = (name: string, fallback: number) => reader.int(name, fallback, { min: 0, max: 65_535 });
  const portsOf = (name: ServiceName): ServicePorts => ({
    port: portOf(PORT_VARIABLES[name].port, DEFAULT_PORTS[name].port),
    adminPort: portOf(PORT_VARIABLES[name].adminPort, DEFAULT_PORTS[name].adminPort),
  });
  const ports: Record<ServiceName, ServicePorts> = {
    gateway: portsOf('gateway'), notes: portsOf('notes'), stats: portsOf('stats'), mailer: portsOf('mailer'),
    webhooks: { port: 0, adminPort: portOf(PORT_VARIABLES.webhooks.adminPort, DEFAULT_PORTS.webhooks.adminPort) },
  };
  ports.webhooks.port = ports.webhooks.adminPort;
  const fixed = Object.entries(ports).flatMap(([name, p]) => [
    ...(name === 'webhooks' ? [] : [[`${name} port`, p.port] as const]),
    [`${name} admin port`, p.adminPort] as const,
  ]).filter(([, port]) => port !== 0);
  const seen = new Map<number, string>();
  for (const [what, port] of fixed) {
    const other = seen.get(port);
    if (other) reader.problem(`ports: ${what} and ${other} are both ${port}`);
    seen.set(port, what);
  }
  const config: AllInOneConfig = {
    dataDir,
    logLevel: reader.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    shutdownGraceMs: reader.int('SHUTDOWN_GRACE_MS', 25_000, { min: 100, max: 600_000 }),
    ports,
    databaseUrls: {
      notes: reader.str('NOTES_DATABASE_URL', `sqlite:${resolve(dataDir, 'notes.db')}`),
      stats: reader.str('STATS_DATABASE_URL', `sqlite:${resolve(dataDir, 'stats.db')}`),
      mailer: reader.str('MAILER_DATABASE_URL', `sqlite:${resolve(dataDir, 'mailer.db')}`),
      webhooks: reader.str('WEBHOOKS_DATABASE_URL', `sqlite:${resolve(dataDir, 'webhooks.db')}`),
    },
    baseEnv: env,
  };
  reader.done();
  return Object.freeze(config);
}

/** Variables the all-in-one sets per service; never inherited from the process environment. */
export const PER_SERVICE: readonly string[] = [
  'HOST', 'ADMIN_HOST', 'PORT', 'ADMIN_PORT', 'DATABASE_URL', 'AMQP_URL', 'AMQP_URLS', 'NOTES_URL', 'STATS_URL', 'MAILER_URL',
  'NOTES_PORT', 'NOTES_ADMIN_PORT', 'STATS_PORT', 'STATS_ADMIN_PORT', 'MAILER_PORT', 'MAILER_ADMIN_PORT',
  'NOTES_DATABASE_URL', 'STATS_DATABASE_URL', 'MAILER_DATABASE_URL', 'WEBHOOKS_ADMIN_PORT', 'WEBHOOKS_DATABASE_URL',
];

/** Where the services behind the gateway and every admin port listen: only this host reaches them. */
export const INTERNAL_HOST = '127.0.0.1';

/**
 * The environment one service loads its config from: the process's environment (shared keys, DATA_DIR,
 * PUBLIC_BASE_URL, SMTP_URL, limits...) with that service's ports and database, no AMQP_URL (the bus is
 * the shared in-process one), and, for the gateway, the addresses the others actually listen on.
 * Only the gateway's public port listens where HOST says; notes, stats, mailer and every admin port
 * listen on loopback, so nothing reaches a service around the gateway's limits and checks.
 */
export function serviceEnv(
  config: AllInOneConfig,
  name: ServiceName,
  upstreams: Partial<Record<Exclude<ServiceName, 'gateway'>, string>> = {},
): Env {
  const env: Record<string, string | undefined> = { ...config.baseEnv };
  for (const key of PER_SERVICE) delete env[key];
  env.DATA_DIR = config.dataDir;
  env.LOG_LEVEL = config.logLevel;
  env.PORT = String(config.ports[name].port);
  env.ADMIN_PORT = String(config.ports[name].adminPort);
  if (name === 'gateway') {
    if (config.baseEnv.HOST !== undefined) env.HOST = config.baseEnv.HOST;
    env.ADMIN_HOST = INTERNAL_HOST;
    if (upstreams.notes) env.NOTES_URL = upstreams.notes;
    if (upstreams.stats) env.STATS_URL = upstreams.stats;
    if (upstreams.mailer) env.MAILER_URL = upstreams.mailer;
  } else {
    env.HOST = INTERNAL_HOST;
    env.DATABASE_URL = config.databaseUrls[name];
  }
  return env;
}

/**
 * A service refused to listen under the names it reads (PORT, ADMIN_PORT, HOST); here those are set by
 * the all-in-one from other variables. The refusal is renamed to what the operator sets: NOTES_PORT,
 * STATS_ADMIN_PORT..., HOST only for the gateway's public port (everything else is on INTERNAL_HOST).
 */
export function asOperatorSetIt(name: ServiceName, err: unknown): unknown {
  if (!(err instanceof ListenError)) return err;
  const isAdmin = err.names.port === 'ADMIN_PORT';
  const names: ListenSettingNames = {
    port: isAdmin ? PORT_VARIABLES[name].adminPort : PORT_VARIABLES[name].port,
    host: name === 'gateway' && !isAdmin ? 'HOST' : undefined,
  };
  return err.renamed(names);
}

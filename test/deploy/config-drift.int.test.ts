// Deploy files cannot drift from the code: the environment that docker compose and the Kubernetes
// overlays give each service is fed into that service's own config loader (services/<svc>/src/config.ts).
// The loader must accept it (the prod overlay under NODE_ENV=production; compose and the dev overlay,
// which serve plain HTTP with DEV-ONLY keys, under NODE_ENV=development but with every value set, so that
// as production only their insecure values would be refused), and every variable the deploy files set
// must be one the loader actually reads (a misspelt variable would otherwise be silently ignored).
import { randomBytes } from 'node:crypto';
import { ConfigError, publicRingOf, silentLogger, type Logger } from '@vanish/common';
import { loadGatewayConfig } from '../../services/gateway/src/config';
import { loadMailerConfig } from '../../services/mailer/src/config';
import { loadNotesConfig } from '../../services/notes/src/config';
import { loadStatsConfig } from '../../services/stats/src/config';
import { PORTS, SERVICES, composeEnv, kustomize, readCompose, secretTemplate, type K8sObject, type ServiceName } from './deploy-files';

type Env = Record<string, string>;
const LOADERS: Record<ServiceName, (env: Env) => { port: number; adminPort: number }> = {
  gateway: (env) => loadGatewayConfig(env),
  notes: (env) => loadNotesConfig(env),
  stats: (env) => loadStatsConfig(env),
  mailer: (env) => loadMailerConfig(env),
};

/** Runs the loader over a Proxy of env that records every variable it looks at. */
function load(service: ServiceName, env: Env): { config: ReturnType<(typeof LOADERS)[ServiceName]> & Record<string, unknown>; unread: string[] } {
  const read = new Set<string>();
  const watched = new Proxy(env, {
    get(target, key) {
      if (typeof key === 'string') read.add(key);
      return Reflect.get(target, key);
    },
  });
  const config = LOADERS[service](watched) as ReturnType<(typeof LOADERS)[ServiceName]> & Record<string, unknown>;
  return { config, unread: Object.keys(env).filter((key) => !read.has(key)) };
}

/** The prod Secrets are created from the template: give its placeholders real shapes. */
function filledTemplate(): Record<string, Env> {
  const out: Record<string, Env> = {};
  for (const [name, data] of Object.entries(secretTemplate())) {
    out[name] = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.replaceAll('BASE64_OF_32_RANDOM_BYTES', randomBytes(32).toString('base64'))]));
  }
  return out;
}

function k8sEnvOf(objects: readonly K8sObject[], service: ServiceName, secrets: Record<string, Env>): Env {
  // Imported lazily to keep the type of k8sEnv's secrets parameter in one place.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { k8sEnv } = require('./deploy-files') as typeof import('./deploy-files');
  return k8sEnv(objects, service, secrets);
}

describe('deploy environments against the services\' own config loaders', () => {
  const compose = readCompose();
  const composeEnvOf = (service: ServiceName) => composeEnv(compose, service);
  const devEnvOf = (() => { let objects: K8sObject[] | undefined; return (service: ServiceName) => k8sEnvOf(objects ??= kustomize('dev'), service, {}); })();
  const sources: [string, string, (service: ServiceName) => Env][] = [
    ['docker compose', 'development', composeEnvOf],
    ['kubernetes dev overlay', 'development', devEnvOf],
    ['kubernetes prod overlay (Secrets from the template)', 'production', (() => { let objects: K8sObject[] | undefined; const secrets = filledTemplate(); return (service: ServiceName) => k8sEnvOf(objects ??= kustomize('prod'), service, secrets); })()],
  ];

  describe.each(sources)('%s', (_name, nodeEnv, envOf) => {
    it.each(SERVICES)(`when %s loads its deployed environment, then it accepts it with NODE_ENV=${nodeEnv} on its DECISIONS 10 ports`, (service) => {
      const env = envOf(service);
      expect(env.NODE_ENV).toBe(nodeEnv);
      const { config } = load(service, env);
      expect([config.port, config.adminPort]).toEqual([PORTS[service].port, PORTS[service].admin]);
    });

    it.each(SERVICES)('when %s loads its deployed environment, then every variable given to it is one it reads', (service) => {
      expect(load(service, envOf(service)).unread).toEqual([]);
    });
  });

  describe.each([['docker compose', composeEnvOf], ['kubernetes dev overlay', devEnvOf]] as const)('%s as if it were production', (_name, envOf) => {
    // Proves the laptop set-ups fall back to no embedded default: as production, nothing is missing,
    // and what keeps them from being production is only what they do on purpose (plain HTTP).
    it.each(SERVICES)('when %s loads it with NODE_ENV=production, then every problem is an insecure explicit value refused by name, none a missing one', (service) => {
      let problems: string[] = [];
      try {
        LOADERS[service]({ ...envOf(service), NODE_ENV: 'production' });
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        problems = err.problems;
      }
      for (const problem of problems) expect(problem).toMatch(/^[A-Z_]+: refused with NODE_ENV=production \(/);
      if (service !== 'stats') expect(problems.some((p) => p.startsWith('PUBLIC_BASE_URL: refused'))).toBe(true);
    });
  });

  it('when the prod overlay is loaded, then the gateway requires HTTPS, trusts one hop (the ingress) without a start-up warning, and links are https', () => {
    const objects = kustomize('prod');
    const secrets = filledTemplate();
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (msg) => { warnings.push(msg); }, child: () => logger };
    const gateway = loadGatewayConfig(k8sEnvOf(objects, 'gateway', secrets), logger);
    expect(gateway.requireHttps).toBe(true);
    expect(gateway.trustProxy).toBe(1);
    expect(warnings).toEqual([]);
    expect(loadNotesConfig(k8sEnvOf(objects, 'notes', secrets)).publicBaseUrl).toMatch(/^https:\/\//);
  });

  it('when compose is loaded, then HTTPS is not required on localhost and notes holds only the public half of the mailer\'s mail keys', () => {
    expect(loadGatewayConfig(composeEnv(compose, 'gateway')).requireHttps).toBe(false);
    const notesEnv = composeEnv(compose, 'notes');
    const notes = loadNotesConfig(notesEnv);
    const mailer = loadMailerConfig(composeEnv(compose, 'mailer'));
    expect(notes.mailSealing).toEqual({ kind: 'to-mailer', publicKeys: publicRingOf(mailer.mailPrivateKeys) });
    expect(Object.keys(notesEnv).filter((name) => /^MAIL_(KEYS|PRIVATE_KEYS)/.test(name))).toEqual([]);
  });

  it.each(['dev', 'prod'] as const)('when the %s overlay is built, then only the mailer references the Secret with the private mail keys', (overlay) => {
    const objects = kustomize(overlay);
    const referencing = objects.filter((o) => JSON.stringify(o.spec?.template ?? {}).includes('"mailer-mail-keys'))
      .map((o) => `${o.kind}/${o.metadata.name}`);
    expect(referencing).toEqual(['Deployment/mailer']);
    const notes = k8sEnvOf(objects, 'notes', filledTemplate());
    expect(Object.keys(notes).filter((name) => /^MAIL_(KEYS|PRIVATE_KEYS)/.test(name))).toEqual([]);
  });

  it('when a deploy file misspells a variable, then the unread-variable check names it (the check is not a no-op)', () => {
    const env = { ...composeEnv(compose, 'stats'), DATABSE_URL: 'mysql://x@y:3306/z' };
    expect(load('stats', env).unread).toEqual(['DATABSE_URL']);
  });
});

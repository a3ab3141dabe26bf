// `npm run k8s:secrets` (deploy/k8s/make-secrets.mjs) writes every Secret a production overlay references
// and nothing else, with the keys of the committed templates, in formats each service's own config loader
// accepts with NODE_ENV=production; the key pairs match (notes seals to the mailer's and the webhooks
// service's private rings); the passwords in users.env are the ones in the URLs; every run is fresh.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { publicRingOf } from '@vanish/common';
import { loadGatewayConfig } from '../../services/gateway/src/config';
import { loadMailerConfig } from '../../services/mailer/src/config';
import { loadNotesConfig } from '../../services/notes/src/config';
import { loadStatsConfig } from '../../services/stats/src/config';
import { loadWebhooksConfig } from '../../services/webhooks/src/config';
import { dataOf, k8sEnv, kustomize, readText, ROOT, secretTemplate, type K8sObject } from './deploy-files';

type Overlay = 'prod' | 'prod-ha';
type Secrets = Record<string, Record<string, string>>;
const SCRIPT = join(ROOT, 'deploy/k8s/make-secrets.mjs');
/** Certificates the overlays reference and the script leaves to cert-manager or a CA. */
const CERTIFICATES: Record<Overlay, string[]> = { prod: ['vanish-tls'], 'prod-ha': ['vanish-tls', 'vanish-rabbitmq-tls'] };

const dirs: string[] = [];
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }); });

function generate(overlay: Overlay): { secrets: Secrets; users: Record<string, string>; out: string; stdout: string } {
  const out = join(mkdtempSync(join(tmpdir(), 'vanish-k8s-secrets-')), 'secrets');
  dirs.push(join(out, '..'));
  const stdout = execFileSync(process.execPath, [SCRIPT, '--overlay', overlay, '--out', out], { encoding: 'utf8' });
  const secrets: Secrets = {};
  for (const doc of YAML.parseAllDocuments(readFileSync(join(out, 'secrets.yaml'), 'utf8'))) {
    const secret = doc.toJSON() as K8sObject;
    expect(secret).toMatchObject({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'vanish' }, type: 'Opaque' });
    secrets[secret.metadata.name] = dataOf(secret);
  }
  const users = Object.fromEntries(readFileSync(join(out, 'users.env'), 'utf8').trim().split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
  return { secrets, users, out, stdout };
}

/** Every Secret name an object refers to: envFrom/env refs, volumes, Ingress TLS, operators' CRs, KEDA. */
function referencedSecrets(objects: readonly K8sObject[]): string[] {
  return [...new Set(secretReferences(objects).map((ref) => ref.name))].sort();
}

/** The references themselves, with the key where one names a key (secretKeyRef, KEDA's secretTargetRef). */
function secretReferences(objects: readonly K8sObject[]): Array<{ name: string; key?: string }> {
  const refs: Array<{ name: string; key?: string }> = [];
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) { value.forEach(walk); return; }
    if (value === null || typeof value !== 'object') return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'secretName' && typeof inner === 'string') refs.push({ name: inner });
      // The redis-operator's RedisFailover: auth.secretPath names a Secret whose key `password` it reads.
      else if (key === 'secretPath' && typeof inner === 'string') refs.push({ name: inner, key: 'password' });
      else if (/secret(Key|Target)?Ref$/i.test(key)) {
        for (const ref of ([] as Array<{ name?: unknown; key?: unknown }>).concat(inner as never)) {
          if (ref && typeof ref.name === 'string') refs.push({ name: ref.name, ...(typeof ref.key === 'string' ? { key: ref.key } : {}) });
        }
      }
      walk(inner);
    }
  };
  objects.forEach(walk);
  const rendered = new Set(objects.filter((o) => o.kind === 'Secret').map((o) => o.metadata.name));
  return refs.filter((ref) => !rendered.has(ref.name));
}

describe.each(['prod', 'prod-ha'] as const)('npm run k8s:secrets -- --overlay %s', (overlay) => {
  let objects: K8sObject[];
  let made: ReturnType<typeof generate>;
  beforeAll(() => {
    objects = kustomize(overlay);
    made = generate(overlay);
  });

  it('when run, then it writes exactly the Secrets the overlay references, and names the certificates it leaves out', () => {
    expect(referencedSecrets(objects)).toEqual([...Object.keys(made.secrets), ...CERTIFICATES[overlay]].sort());
    expect(made.stdout).toContain(`not made here (certificates): ${CERTIFICATES[overlay].join(', ')}`);
  });

  it('when a reference names a key of a Secret, then the generated Secret has that key', () => {
    const keyed = secretReferences(objects).filter((ref) => ref.key !== undefined);
    if (overlay === 'prod-ha') expect(keyed.length).toBeGreaterThan(0);
    expect(keyed.filter((ref) => made.secrets[ref.name]?.[ref.key!] === undefined)).toEqual([]);
  });

  it('when run, then the files are readable by their owner only', () => {
    expect(statSync(join(made.out, 'secrets.yaml')).mode & 0o777).toBe(0o600);
    expect(statSync(join(made.out, 'users.env')).mode & 0o777).toBe(0o600);
    expect(statSync(made.out).mode & 0o777).toBe(0o700);
  });

  it('when each service loads its deployed environment with these Secrets, then its config accepts it in production', () => {
    const envOf = (service: string) => k8sEnv(objects, service, made.secrets);
    for (const service of ['gateway', 'notes', 'stats', 'mailer', 'webhooks']) expect(envOf(service).NODE_ENV).toBe('production');
    expect(() => loadGatewayConfig(envOf('gateway'))).not.toThrow();
    expect(() => loadStatsConfig(envOf('stats'))).not.toThrow();
    const notes = loadNotesConfig(envOf('notes'));
    const mailer = loadMailerConfig(envOf('mailer'));
    const webhooks = loadWebhooksConfig(envOf('webhooks'));
    expect(notes.mailSealing).toEqual({ kind: 'to-mailer', publicKeys: publicRingOf(mailer.mailPrivateKeys) });
    expect(notes.webhookPublicKeys).toEqual(publicRingOf(webhooks.privateKeys));
    expect(mailer.hashKeySource).toBe('MAILER_HASH_KEY');
  });

  it('when the users\' passwords are read, then each is the one in its service\'s URL, and set-permissions.sh gets every one it needs', () => {
    for (const service of ['notes', 'stats', 'mailer', 'webhooks']) {
      const secret = made.secrets[`${service}-secrets`]!;
      expect(new URL(secret.DATABASE_URL!).password).toBe(made.users[`${service.toUpperCase()}_DB_PASSWORD`]);
      expect(new URL(secret.AMQP_URL!).password).toBe(made.users[`${service.toUpperCase()}_AMQP_PASSWORD`]);
    }
    // prod-ha: the gateway's Redis password is the one the RedisFailover's nodes require.
    if (overlay === 'prod-ha') expect(made.secrets['gateway-secrets']!.REDIS_PASSWORD).toBe(made.secrets['vanish-redis-auth']!.password);
    if (overlay === 'prod-ha') expect(readText('deploy/rabbitmq/set-permissions.sh')).toContain('vanish_user keda "$KEDA_AMQP_PASSWORD"');
    const needed = [...readText('deploy/rabbitmq/set-permissions.sh').matchAll(/\$\{([A-Z_]+_AMQP_PASSWORD):\?/g)].map((m) => m[1]!);
    expect(needed.length).toBeGreaterThan(0);
    expect(needed.filter((name) => made.users[name] === undefined)).toEqual([]);
  });

  it('when run twice, then no key or password repeats', () => {
    const again = generate(overlay);
    const values = (secrets: Secrets) => Object.values(secrets).flatMap((data) => Object.values(data));
    const shared = values(made.secrets).filter((value) => values(again.secrets).includes(value) && !value.startsWith('smtps://USER:PASSWORD@'));
    expect(shared).toEqual([]);
  });
});

describe('the generated Secrets and the committed templates', () => {
  it('when the prod Secrets are made, then each has exactly the keys its template has', () => {
    const { secrets } = generate('prod');
    const keysOf = (data: Record<string, string>) => Object.keys(data).sort();
    expect(Object.fromEntries(Object.entries(secrets).map(([name, data]) => [name, keysOf(data)])))
      .toEqual(Object.fromEntries(Object.entries(secretTemplate()).map(([name, data]) => [name, keysOf(data)])));
  });

  it('when secrets.yaml already exists, then it refuses to replace it without --force (fresh keys would lose every note)', () => {
    const { out } = generate('prod');
    let failure: { status?: number; stderr?: string } = {};
    try {
      execFileSync(process.execPath, [SCRIPT, '--overlay', 'prod', '--out', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      failure = err as typeof failure;
    }
    expect(failure.status).toBe(1);
    expect(failure.stderr).toContain('use --force');
  });
});

// The webhooks service in the deploy files (docker compose, both kustomize overlays): its deployed
// environment is one its own config loader accepts and reads entirely, its private key ring is a
// Secret only it mounts (notes gets the public half), it listens on its admin port only, and its
// egress reaches the internet but none of the private ranges (DECISIONS 11).
import { randomBytes } from 'node:crypto';
import { ConfigError, KeyRing, publicRingOf } from '@vanish/common';
import { loadNotesConfig } from '../../services/notes/src/config';
import { loadWebhooksConfig } from '../../services/webhooks/src/config';
import { composeEnv, find, k8sEnv, kustomize, readCompose, secretTemplate, type K8sObject } from './deploy-files';

type Env = Record<string, string>;

function unreadBy(env: Env, load: (env: Env) => unknown): string[] {
  const read = new Set<string>();
  load(new Proxy(env, { get(target, key) { if (typeof key === 'string') read.add(key); return Reflect.get(target, key); } }));
  return Object.keys(env).filter((key) => !read.has(key));
}

function filledTemplate(): Record<string, Env> {
  const out: Record<string, Env> = {};
  for (const [name, data] of Object.entries(secretTemplate())) {
    out[name] = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.replaceAll('BASE64_OF_32_RANDOM_BYTES', randomBytes(32).toString('base64'))]));
  }
  return out;
}

describe('the webhooks service in the deploy files', () => {
  const compose = readCompose();
  const dev = kustomize('dev');
  const prod = kustomize('prod');
  const sources: Array<[string, string, () => Env]> = [
    ['docker compose', 'development', () => composeEnv(compose, 'webhooks')],
    ['kubernetes dev overlay', 'development', () => k8sEnv(dev, 'webhooks')],
    ['kubernetes prod overlay (Secrets from the template)', 'production', () => k8sEnv(prod, 'webhooks', filledTemplate())],
  ];

  it.each(sources)('when the %s environment is loaded, then the loader accepts it on admin port 9084 and reads every variable', (_name, nodeEnv, envOf) => {
    const env = envOf();
    expect(env.NODE_ENV).toBe(nodeEnv);
    expect(loadWebhooksConfig(env).adminPort).toBe(9084);
    expect(unreadBy(env, (e) => loadWebhooksConfig(e))).toEqual([]);
  });

  it('when compose is loaded as if it were production, then only explicit insecure values are refused (plaintext dependencies, private networks)', () => {
    let problems: string[] = [];
    try {
      loadWebhooksConfig({ ...composeEnv(compose, 'webhooks'), NODE_ENV: 'production' });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems = err.problems;
    }
    expect(problems.some((p) => p.startsWith('WEBHOOK_ALLOW_PRIVATE_NETWORKS: refused'))).toBe(true);
    for (const problem of problems) expect(problem).toMatch(/^[A-Z_]+: refused with NODE_ENV=production \(/);
  });

  it('when compose and the dev overlay are loaded, then notes seals to the public half of the webhooks service\'s private ring and holds no private key', () => {
    for (const [notesEnv, webhooksEnv] of [[composeEnv(compose, 'notes'), composeEnv(compose, 'webhooks')], [k8sEnv(dev, 'notes'), k8sEnv(dev, 'webhooks')]] as const) {
      expect(loadNotesConfig(notesEnv).webhookPublicKeys).toEqual(publicRingOf(KeyRing.parse(webhooksEnv.WEBHOOK_PRIVATE_KEYS!)));
      expect(Object.keys(notesEnv).filter((name) => name.startsWith('WEBHOOK_PRIVATE'))).toEqual([]);
    }
  });

  it.each([['dev', dev], ['prod', prod]] as const)('when the %s overlay is built, then only the webhooks Deployment references webhooks-keys, and it listens on its admin port only', (_overlay, objects) => {
    const referencing = objects.filter((o) => JSON.stringify(o.spec?.template ?? {}).includes('"webhooks-keys'))
      .map((o) => `${o.kind}/${o.metadata.name}`);
    expect(referencing).toEqual(['Deployment/webhooks']);
    const container = find(objects, 'Deployment', 'webhooks').spec.template.spec.containers[0];
    expect(container.ports).toEqual([{ name: 'admin', containerPort: 9084 }]);
    expect(find(objects, 'Service', 'webhooks').spec.ports).toEqual([{ name: 'admin', port: 9084, targetPort: 'admin' }]);
  });

  it('when the egress policy is read, then the webhooks pods reach the internet but no loopback, private, link-local, CGNAT or unique-local range', () => {
    const policy = find(prod, 'NetworkPolicy', 'webhooks-egress') as K8sObject;
    expect(policy.spec.podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'webhooks' });
    const blocks = policy.spec.egress.flatMap((rule: { to?: Array<{ ipBlock?: { cidr: string; except: string[] } }> }) => rule.to ?? []).map((to: { ipBlock?: unknown }) => to.ipBlock);
    const v4 = blocks.find((b: { cidr: string }) => b.cidr === '0.0.0.0/0');
    const v6 = blocks.find((b: { cidr: string }) => b.cidr === '::/0');
    for (const range of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '169.254.0.0/16', '100.64.0.0/10']) expect(v4.except).toContain(range);
    for (const range of ['::1/128', 'fc00::/7', 'fe80::/10', '::ffff:0:0/96']) expect(v6.except).toContain(range);
    const admin = find(prod, 'NetworkPolicy', 'admin-ports-from-prometheus');
    expect(admin.spec.ingress[0].ports).toContainEqual({ port: 9084, protocol: 'TCP' });
  });
});

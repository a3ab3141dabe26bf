// Readers for the deploy files (docker-compose.yml, kustomize overlays, env files), shared by the
// deploy tests. Everything here is offline: kubectl only renders (`kubectl kustomize`), it never
// talks to a cluster.
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';

export const ROOT = join(__dirname, '..', '..');
export const SERVICES = ['gateway', 'notes', 'stats', 'mailer'] as const;
export type ServiceName = (typeof SERVICES)[number];
/** Services with an admin port only (no public traffic): checked by test/deploy/webhooks-deploy.int.test.ts. */
export const ADMIN_ONLY_SERVICES = ['webhooks'] as const;
export const ALL_SERVICES = [...SERVICES, ...ADMIN_ONLY_SERVICES] as const;
/** DECISIONS 10. */
export const PORTS: Record<ServiceName, { port: number; admin: number }> = {
  gateway: { port: 8080, admin: 9080 },
  notes: { port: 8081, admin: 9081 },
  stats: { port: 8082, admin: 9082 },
  mailer: { port: 8083, admin: 9083 },
};

// Kubernetes objects are loosely typed on purpose: the schema validation is what types them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type K8sObject = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> }; [key: string]: any };

export function readText(relative: string): string {
  return readFileSync(join(ROOT, relative), 'utf8');
}

/** `directory`: where the overlay is, when not in this checkout (a test's edited copy). */
export function kustomize(overlay: 'dev' | 'prod' | 'prod-ha', directory = join(ROOT, 'deploy/k8s/overlays', overlay)): K8sObject[] {
  let out: string;
  try {
    out = execFileSync('kubectl', ['kustomize', directory], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { code?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error('kubectl is not installed: these tests render the manifests with `kubectl kustomize` (apt-get install kubectl, or any kubectl >= 1.27)');
    throw new Error(`kubectl kustomize deploy/k8s/overlays/${overlay} failed:\n${e.stderr ?? String(err)}`);
  }
  return YAML.parseAllDocuments(out).map((doc) => doc.toJSON() as K8sObject).filter(Boolean);
}

/** KEY=VALUE lines; # comments and blank lines ignored (the subset docker compose and kustomize agree on). */
export function parseEnvFile(relative: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of readText(relative).split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const eq = trimmed.indexOf('=');
    if (eq < 1) throw new Error(`${relative}: not KEY=VALUE: ${line}`);
    env[trimmed.slice(0, eq)] = trimmed.slice(eq + 1);
  }
  return env;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ComposeFile = { services: Record<string, any>; volumes?: Record<string, unknown> };

export function readCompose(): ComposeFile {
  return YAML.parse(readText('docker-compose.yml'), { merge: true }) as ComposeFile;
}

/** The environment docker compose gives a service: env_file entries, then `environment` over them. */
export function composeEnv(compose: ComposeFile, service: string): Record<string, string> {
  const definition = compose.services[service];
  if (!definition) throw new Error(`docker-compose.yml has no service ${service}`);
  const files: string[] = definition.env_file === undefined ? [] : ([] as string[]).concat(definition.env_file);
  const env: Record<string, string> = {};
  for (const file of files) Object.assign(env, parseEnvFile(file));
  const environment = definition.environment ?? {};
  if (Array.isArray(environment)) {
    for (const entry of environment as string[]) {
      const eq = entry.indexOf('=');
      env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
  } else {
    for (const [key, value] of Object.entries(environment)) env[key] = value === null ? '' : String(value);
  }
  return env;
}

export function byKind(objects: readonly K8sObject[], kind: string): K8sObject[] {
  return objects.filter((o) => o.kind === kind);
}

export function find(objects: readonly K8sObject[], kind: string, name: string): K8sObject {
  const found = objects.find((o) => o.kind === kind && (o.metadata.name === name || o.metadata.name.startsWith(`${name}-`) && /-[a-z0-9]{10}$/.test(o.metadata.name)));
  if (!found) throw new Error(`no ${kind} ${name} in the rendered manifests`);
  return found;
}

/** Decoded data of a rendered Secret or ConfigMap. */
export function dataOf(object: K8sObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries((object.data ?? {}) as Record<string, string>)) {
    out[key] = object.kind === 'Secret' ? Buffer.from(value.replace(/\s+/g, ''), 'base64').toString('utf8') : value;
  }
  for (const [key, value] of Object.entries((object.stringData ?? {}) as Record<string, string>)) out[key] = value;
  return out;
}

/**
 * The environment Kubernetes gives a service's container: envFrom ConfigMaps and Secrets in order
 * (later wins), then `env` literals. `secrets` supplies Secrets the manifests do not contain (prod).
 * fieldRef values get a stand-in pod name.
 */
export function k8sEnv(objects: readonly K8sObject[], deployment: string, secrets: Record<string, Record<string, string>> = {}): Record<string, string> {
  const container = find(objects, 'Deployment', deployment).spec.template.spec.containers[0];
  const env: Record<string, string> = {};
  for (const source of container.envFrom ?? []) {
    if (source.configMapRef) Object.assign(env, dataOf(find(objects, 'ConfigMap', source.configMapRef.name)));
    if (source.secretRef) {
      const name = source.secretRef.name as string;
      const rendered = objects.find((o) => o.kind === 'Secret' && o.metadata.name === name);
      const given = secrets[name.replace(/-[a-z0-9]{10}$/, '')];
      if (!rendered && !given) throw new Error(`${deployment}: Secret ${name} is neither rendered nor supplied`);
      Object.assign(env, rendered ? dataOf(rendered) : given);
    }
  }
  for (const item of container.env ?? []) env[item.name] = item.value ?? (item.valueFrom?.fieldRef ? `${deployment}-7d9f8b6c5-x2x4z` : '');
  return env;
}

/** The Secret template (base/secret-template.yaml): name -> keys with placeholder values. */
export function secretTemplate(): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  const templates = readdirSync(join(ROOT, 'deploy/k8s/base')).filter((f) => /(^|\.)secret-template\.yaml$/.test(f));
  for (const file of templates) {
    for (const doc of YAML.parseAllDocuments(readText(`deploy/k8s/base/${file}`))) {
      const secret = doc.toJSON() as K8sObject;
      out[secret.metadata.name] = dataOf(secret);
    }
  }
  return out;
}

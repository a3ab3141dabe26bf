// The `ha` component (deploy/k8s/components/ha), rendered through overlays/prod-ha by `kubectl
// kustomize` and checked offline: every object against its schema (Kubernetes and Prometheus Operator
// from kubernetes-models, KEDA from @kubernetes-models/keda, the three operators' resources from the
// CRD subsets in crd-schemas/operators.ts), then what docs/scaling.md promises of it.
import Ajv from 'ajv';
import { loadGatewayConfig } from '../../services/gateway/src/config';
import { NOTE_EVENTS_QUEUE } from '../../services/stats/src';
import { DEFAULT_MAIL_QUEUE } from '../../services/all-in-one/src/topology';
import { OPERATOR_SCHEMAS } from './crd-schemas/operators';
import { kustomize, type K8sObject } from './deploy-files';

type Model = { new (data: unknown): { validate(): void } };

function validatorFor(object: K8sObject): (o: K8sObject) => void {
  const key = `${object.apiVersion} ${object.kind}`;
  if (OPERATOR_SCHEMAS[key]) {
    const check = new Ajv({ allErrors: true, strict: false }).compile(OPERATOR_SCHEMAS[key]);
    return (o) => {
      if (!check(o)) throw new Error(JSON.stringify(check.errors));
    };
  }
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : [undefined, object.apiVersion];
  const path = group === 'monitoring.coreos.com' ? `@kubernetes-models/prometheus-operator/${group}/${version}/${object.kind}`
    : group === 'keda.sh' ? `@kubernetes-models/keda/${group}/${version}/${object.kind}`
      : group ? `kubernetes-models/${group}/${version}/${object.kind}` : `kubernetes-models/${version}/${object.kind}`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const model = (require(path) as Record<string, Model>)[object.kind];
  if (!model) throw new Error(`no schema for ${key}`);
  return (o) => new model(o).validate();
}

function forValidation(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  return { ...object, data: Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')])) };
}

const find = (objects: K8sObject[], kind: string, name: string): K8sObject => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  if (!found) throw new Error(`${kind}/${name} not rendered`);
  return found;
};

describe('kustomize overlay prod-ha (the ha component)', () => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = kustomize('prod-ha');
  });

  it('when rendered, then every object validates against its schema (Kubernetes, Prometheus Operator, KEDA, operator CRDs)', () => {
    const failures: string[] = [];
    for (const object of objects) {
      try {
        validatorFor(object)(forValidation(object));
      } catch (err) {
        failures.push(`${object.kind}/${object.metadata.name}: ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
    expect(objects.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace !== 'vanish').map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([]);
  });

  it('when rendered, then a misspelt operator field is caught (the CRD subsets are closed)', () => {
    const rabbit = find(objects, 'RabbitmqCluster', 'vanish-rabbitmq');
    expect(() => validatorFor(rabbit)({ ...rabbit, spec: { ...rabbit.spec, replica: 3 } })).toThrow(/additionalProperties/);
    const mariadb = find(objects, 'MariaDB', 'vanish-mariadb');
    expect(() => validatorFor(mariadb)({ ...mariadb, spec: { ...mariadb.spec, galera: { ...mariadb.spec.galera, enable: true } } })).toThrow(/additionalProperties/);
  });

  it('when rendered, then RabbitMQ, Redis and MariaDB run three nodes each, spread across nodes and zones, with disruption budgets of one', () => {
    const rabbit = find(objects, 'RabbitmqCluster', 'vanish-rabbitmq');
    expect(rabbit.spec.replicas).toBe(3);
    expect(rabbit.spec.rabbitmq.additionalConfig).toMatch(/cluster_partition_handling = pause_minority/);
    expect(rabbit.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey).toBe('kubernetes.io/hostname');
    expect(rabbit.spec.override.statefulSet.spec.template.spec.topologySpreadConstraints[0].topologyKey).toBe('topology.kubernetes.io/zone');
    const rabbitPdb = find(objects, 'PodDisruptionBudget', 'vanish-rabbitmq');
    expect(rabbitPdb.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: { 'app.kubernetes.io/name': 'vanish-rabbitmq' } } });

    const redis = find(objects, 'RedisFailover', 'vanish-redis');
    expect([redis.spec.redis.replicas, redis.spec.sentinel.replicas]).toEqual([3, 3]);
    expect(redis.spec.auth).toEqual({ secretPath: 'vanish-redis-auth' }); // the data nodes require a password
    const mariadb = find(objects, 'MariaDB', 'vanish-mariadb');
    expect(mariadb.spec.replicas).toBe(3);
    // Galera written through one node, the operator's primary Service (docs/scaling.md, test/cluster/galera-failover).
    expect(mariadb.spec.galera).toMatchObject({ enabled: true, primary: { automaticFailover: true }, sst: 'mariabackup', recovery: { enabled: true } });
    expect(mariadb.spec.replication).toBeUndefined();
    expect(mariadb.spec.galera.providerOptions['evs.suspect_timeout']).toMatch(/^PT\d/);
    expect(mariadb.spec.podDisruptionBudget).toEqual({ maxUnavailable: 1 });
  });

  it('when rendered, then every service Deployment spreads across zones and nodes, and its budget leaves a replica running', () => {
    for (const name of ['gateway', 'notes', 'stats', 'mailer']) {
      const deployment = find(objects, 'Deployment', name);
      const keys = deployment.spec.template.spec.topologySpreadConstraints.map((c: { topologyKey: string }) => c.topologyKey);
      expect({ name, keys: keys.sort() }).toEqual({ name, keys: ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'] });
      const pdb = find(objects, 'PodDisruptionBudget', name);
      const minReplicas = deployment.spec.replicas ?? find(objects, 'ScaledObject', name).spec.minReplicaCount;
      expect({ name, fits: pdb.spec.maxUnavailable < minReplicas }).toEqual({ name, fits: true });
    }
  });

  it('when rendered, then KEDA scales stats and the mailer on their real queues, owning their replica counts', () => {
    const expected: Record<string, string> = { stats: NOTE_EVENTS_QUEUE, mailer: DEFAULT_MAIL_QUEUE };
    for (const [name, queue] of Object.entries(expected)) {
      const scaled = find(objects, 'ScaledObject', name);
      expect(scaled.spec.scaleTargetRef.name).toBe(name);
      expect(find(objects, 'Deployment', name).spec.replicas).toBeUndefined();
      expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
      const trigger = scaled.spec.triggers[0];
      expect(trigger).toMatchObject({ type: 'rabbitmq', metadata: { mode: 'QueueLength', queueName: queue }, authenticationRef: { name: 'vanish-rabbitmq' } });
      find(objects, 'TriggerAuthentication', trigger.authenticationRef.name);
    }
  });

  it('when the gateway gets the ha configuration, then its config loader accepts it in production (Sentinels, TLS) and it may reach them', () => {
    const config = find(objects, 'ConfigMap', 'gateway-config').data as Record<string, string>;
    const common = find(objects, 'ConfigMap', 'vanish-common').data as Record<string, string>;
    const loaded = loadGatewayConfig({ ...common, ...config, LIMITER_KEY: Buffer.alloc(32, 7).toString('base64'), PUBLIC_BASE_URL: 'https://vanish.example.com' });
    expect(loaded.redisSentinel).toMatchObject({ sentinels: [{ host: 'rfs-vanish-redis', port: 26379 }], name: 'mymaster', tls: true });
    const egress = objects.filter((o) => o.kind === 'NetworkPolicy' && o.spec.podSelector.matchLabels?.['app.kubernetes.io/name'] === 'gateway');
    const ports = egress.flatMap((p) => (p.spec.egress ?? []).flatMap((rule: { ports?: Array<{ port: number }> }) => (rule.ports ?? []).map((port) => port.port)));
    expect(ports).toEqual(expect.arrayContaining([6379, 26379]));
  });
});

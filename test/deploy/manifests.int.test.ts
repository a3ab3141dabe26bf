// The Kubernetes manifests, rendered by `kubectl kustomize` for both overlays, validated offline
// against the Kubernetes OpenAPI schemas (kubernetes-models, and the Prometheus Operator's CRD
// schemas for ServiceMonitor/PrometheusRule), then checked for the properties docs/operations.md
// promises: probes, limits, non-root, read-only root, pinned images, NetworkPolicies that select
// real pods.
import { ALL_SERVICES, PORTS, SERVICES, byKind, dataOf, find, kustomize, secretTemplate, type K8sObject } from './deploy-files';
import { parseTrustProxy, trustProxyTooWide } from '../../services/gateway/src/config';

type Labels = Record<string, string>;

function modelFor(object: K8sObject): { new (data: unknown): { validate(): void } } {
  const [group, version] = object.apiVersion.includes('/') ? object.apiVersion.split('/') : [undefined, object.apiVersion];
  const path = group === 'monitoring.coreos.com'
    ? `@kubernetes-models/prometheus-operator/${group}/${version}/${object.kind}`
    : group ? `kubernetes-models/${group}/${version}/${object.kind}` : `kubernetes-models/${version}/${object.kind}`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const model = (require(path) as Record<string, { new (data: unknown): { validate(): void } }>)[object.kind];
  if (!model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
  return model;
}

/** kustomize wraps long base64 values over lines; the API server (Go's decoder) skips newlines. */
function forValidation(object: K8sObject): K8sObject {
  if (object.kind !== 'Secret' || !object.data) return object;
  return { ...object, data: Object.fromEntries(Object.entries(object.data as Record<string, string>).map(([k, v]) => [k, v.replace(/\s+/g, '')])) };
}

function matches(selector: Labels | undefined, labels: Labels | undefined): boolean {
  if (!selector) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

const WORKLOAD_KINDS = ['Deployment', 'StatefulSet'];
const workloads = (objects: K8sObject[]) => objects.filter((o) => WORKLOAD_KINDS.includes(o.kind));
const podLabels = (objects: K8sObject[]) => workloads(objects).map((w) => w.spec.template.metadata.labels as Labels);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const containersOf = (workload: K8sObject): any[] => [...(workload.spec.template.spec.initContainers ?? []), ...workload.spec.template.spec.containers];

describe.each(['dev', 'prod'] as const)('kustomize overlay %s', (overlay) => {
  let objects: K8sObject[];
  beforeAll(() => {
    objects = kustomize(overlay);
  });

  it('when rendered, then every object validates against its Kubernetes (or Prometheus Operator) schema', () => {
    expect(objects.length).toBeGreaterThan(20);
    const failures: string[] = [];
    for (const object of objects) {
      try {
        new (modelFor(object))(forValidation(object)).validate();
      } catch (err) {
        failures.push(`${object.kind}/${object.metadata.name}: ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('when rendered, then every namespaced object lands in the vanish namespace', () => {
    const misplaced = objects.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace !== 'vanish').map((o) => `${o.kind}/${o.metadata.name}`);
    expect(misplaced).toEqual([]);
  });

  it('when a service is deployed, then it has liveness /healthz and readiness /readyz on its admin port, and a startup probe', () => {
    for (const service of SERVICES) {
      const deployment = find(objects, 'Deployment', service);
      const [container] = deployment.spec.template.spec.containers;
      const adminPort = container.ports.find((p: { name: string }) => p.name === 'admin');
      expect(adminPort?.containerPort).toBe(PORTS[service].admin);
      expect(container.ports.find((p: { name: string }) => p.name === 'http')?.containerPort).toBe(PORTS[service].port);
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'admin' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'admin' });
      expect(container.startupProbe.httpGet.port).toBe('admin');
      const env = Object.fromEntries(container.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
      expect(env).toMatchObject({ PORT: String(PORTS[service].port), ADMIN_PORT: String(PORTS[service].admin) });
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(20);
    }
  });

  it('when a service is deployed, then it runs non-root, on a read-only root, without capabilities, under seccomp, with /tmp as an emptyDir', () => {
    for (const service of SERVICES) {
      const pod = find(objects, 'Deployment', service).spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.serviceAccountName).toBe(service);
      for (const container of pod.containers) {
        expect(container.securityContext).toMatchObject({
          runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' },
        });
        const tmp = container.volumeMounts.find((m: { mountPath: string }) => m.mountPath === '/tmp');
        expect(pod.volumes.find((v: { name: string }) => v.name === tmp?.name)?.emptyDir).toBeDefined();
      }
      find(objects, 'ServiceAccount', service);
    }
  });

  it('when any workload is rendered, then every container has memory limits, requests and runs non-root', () => {
    for (const workload of workloads(objects)) {
      const podContext = workload.spec.template.spec.securityContext ?? {};
      for (const container of containersOf(workload)) {
        const where = `${workload.kind}/${workload.metadata.name}/${container.name}`;
        expect({ where, limit: container.resources?.limits?.memory !== undefined }).toEqual({ where, limit: true });
        expect({ where, requests: container.resources?.requests?.cpu !== undefined && container.resources?.requests?.memory !== undefined }).toEqual({ where, requests: true });
        expect({ where, nonRoot: (container.securityContext?.runAsNonRoot ?? podContext.runAsNonRoot) === true }).toEqual({ where, nonRoot: true });
        expect({ where, noEscalation: container.securityContext?.allowPrivilegeEscalation }).toEqual({ where, noEscalation: false });
      }
    }
  });

  it('when any image is referenced, then it has a pinned tag or digest and never latest', () => {
    const images = workloads(objects).flatMap((w) => containersOf(w).map((c) => c.image as string));
    expect(images.length).toBeGreaterThanOrEqual(4);
    for (const image of images) {
      const lastSegment = image.split('/').pop()!;
      expect({ image, pinned: lastSegment.includes('@sha256:') || /:[^:]+$/.test(lastSegment) }).toEqual({ image, pinned: true });
      expect(image).not.toMatch(/:latest(@|$)/);
    }
  });

  it('when Services, PodDisruptionBudgets and HPAs are rendered, then their selectors and targets match the Deployments', () => {
    const labels = podLabels(objects);
    for (const service of byKind(objects, 'Service')) {
      expect({ service: service.metadata.name, matches: labels.some((l) => matches(service.spec.selector, l)) }).toEqual({ service: service.metadata.name, matches: true });
    }
    for (const service of SERVICES) {
      const svc = find(objects, 'Service', service);
      expect(svc.spec.ports.map((p: { name: string; port: number }) => [p.name, p.port]).sort()).toEqual([['admin', PORTS[service].admin], ['http', PORTS[service].port]]);
      const pdb = find(objects, 'PodDisruptionBudget', service);
      expect(matches(pdb.spec.selector.matchLabels, find(objects, 'Deployment', service).spec.template.metadata.labels)).toBe(true);
    }
    const hpaTargets = byKind(objects, 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name).sort();
    expect(hpaTargets).toEqual(['gateway', 'notes']);
    for (const target of hpaTargets) find(objects, 'Deployment', target);
  });

  it('when NetworkPolicies are rendered, then ingress is denied by default and every policy selects pods that exist', () => {
    const policies = byKind(objects, 'NetworkPolicy');
    const denyAll = policies.find((p) => Object.keys(p.spec.podSelector ?? {}).length === 0 && (p.spec.ingress ?? []).length === 0);
    expect(denyAll?.spec.policyTypes).toEqual(['Ingress']);
    const labels = podLabels(objects);
    for (const policy of policies.filter((p) => p !== denyAll)) {
      expect({ policy: policy.metadata.name, selects: labels.some((l) => matches(policy.spec.podSelector.matchLabels, l)) }).toEqual({ policy: policy.metadata.name, selects: true });
      for (const rule of policy.spec.ingress ?? []) {
        for (const peer of rule.from ?? []) {
          // A peer without namespaceSelector names pods in this namespace: they must exist.
          if (peer.podSelector && !peer.namespaceSelector) {
            expect({ policy: policy.metadata.name, peerExists: labels.some((l) => matches(peer.podSelector.matchLabels, l)) }).toEqual({ policy: policy.metadata.name, peerExists: true });
          }
        }
      }
    }
  });

  it('when NetworkPolicies are rendered, then only the ingress controller reaches the gateway, only the gateway reaches the others, and only Prometheus reaches admin ports', () => {
    const policies = byKind(objects, 'NetworkPolicy');
    /** Every (peer, port) allowed into the pods of a Deployment. */
    const allowedInto = (service: string) => {
      const podLabelsOf = find(objects, 'Deployment', service).spec.template.metadata.labels as Labels;
      return policies
        .filter((p) => Object.keys(p.spec.podSelector?.matchLabels ?? {}).length > 0 && matches(p.spec.podSelector.matchLabels, podLabelsOf))
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        .flatMap((p) => (p.spec.ingress ?? []).flatMap((rule: any) => (rule.ports ?? [{ port: 'any' }]).flatMap((port: { port: number | string }) => (rule.from ?? [{ everyone: true }]).map((peer: unknown) => ({ port: port.port, peer: JSON.stringify(peer) })))));
    };
    const ingressController = JSON.stringify({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'ingress-nginx' } } });
    const prometheus = JSON.stringify({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } });
    const gatewayPods = JSON.stringify({ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } } });
    for (const service of SERVICES) {
      const allowed = allowedInto(service);
      expect(allowed.some((a) => a.port === 'any')).toBe(false);
      const publicPeers = [...new Set(allowed.filter((a) => a.port === PORTS[service].port).map((a) => a.peer))];
      expect(publicPeers).toEqual([service === 'gateway' ? ingressController : gatewayPods]);
      const adminPeers = [...new Set(allowed.filter((a) => a.port === PORTS[service].admin).map((a) => a.peer))];
      expect(adminPeers).toEqual([prometheus]);
      expect(allowed.every((a) => a.port === PORTS[service].port || a.port === PORTS[service].admin || /^90\d\d$/.test(String(a.port)))).toBe(true);
    }
  });

  it('when NetworkPolicies are rendered, then egress is denied by default and each service reaches only DNS and what it uses', () => {
    const policies = byKind(objects, 'NetworkPolicy');
    const labels = podLabels(objects);
    const podsOf = (service: string) => find(objects, 'Deployment', service).spec.template.metadata.labels as Labels;
    const egressPolicies = policies.filter((p) => (p.spec.policyTypes ?? []).includes('Egress'));
    const denyAll = egressPolicies.filter((p) => (p.spec.egress ?? []).length === 0);
    for (const service of SERVICES) expect({ service, denied: denyAll.some((p) => matches(p.spec.podSelector.matchLabels, podsOf(service))) }).toEqual({ service, denied: true });
    for (const policy of egressPolicies) {
      for (const rule of policy.spec.egress ?? []) {
        for (const peer of rule.to ?? []) {
          if (peer.podSelector && !peer.namespaceSelector) {
            expect({ policy: policy.metadata.name, peerExists: labels.some((l) => matches(peer.podSelector.matchLabels, l)) }).toEqual({ policy: policy.metadata.name, peerExists: true });
          }
        }
      }
    }
    /** Every (port/protocol, peer) a Deployment's pods may reach. */
    const allowedOut = (service: string) => egressPolicies
      .filter((p) => matches(p.spec.podSelector.matchLabels, podsOf(service)))
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      .flatMap((p) => (p.spec.egress ?? []).flatMap((rule: any) => (rule.ports ?? [{ port: 'any' }]).flatMap((port: { port: number | string; protocol?: string }) =>
        (rule.to ?? [{ anywhere: true }]).map((peer: unknown) => ({ port: `${port.port}/${port.protocol ?? 'TCP'}`, peer: JSON.stringify(peer) })))));
    const dns = JSON.stringify({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } });
    const pods = (name: string) => JSON.stringify({ podSelector: { matchLabels: { 'app.kubernetes.io/name': name } } });
    const database = ['3306/TCP'];
    const broker = ['5671/TCP', '5672/TCP'];
    const smtp = ['465/TCP', '587/TCP', '25/TCP', ...(overlay === 'dev' ? ['1025/TCP'] : [])];
    const expected: Record<string, string[]> = {
      gateway: ['8081/TCP', '8082/TCP', '8083/TCP', '6379/TCP', '6380/TCP'],
      notes: [...database, ...broker, '443/TCP', '9000/TCP'],
      stats: [...database, ...broker],
      mailer: [...database, ...broker, ...smtp],
    };
    for (const service of SERVICES) {
      const allowed = allowedOut(service);
      expect(allowed.some((a) => a.port.startsWith('any'))).toBe(false);
      expect({ service, ports: [...new Set(allowed.map((a) => a.port))].sort() }).toEqual({ service, ports: ['53/TCP', '53/UDP', ...expected[service]!].sort() });
      expect([...new Set(allowed.filter((a) => a.port.startsWith('53/')).map((a) => a.peer))]).toEqual([dns]);
      for (const other of SERVICES.filter((o) => o !== 'gateway')) {
        const peers = [...new Set(allowed.filter((a) => a.port === `${PORTS[other].port}/TCP`).map((a) => a.peer))];
        expect({ service, other, peers }).toEqual({ service, other, peers: service === 'gateway' ? [pods(other)] : [] });
      }
      if (overlay === 'dev' && service === 'mailer') expect(allowed.filter((a) => a.port === '1025/TCP').map((a) => a.peer)).toEqual([pods('mailpit')]);
    }
  });

  it('when Deployments mount Secrets, then each service mounts only its own, and its own holds only the values it uses', () => {
    const template = secretTemplate();
    for (const service of ALL_SERVICES) {
      const deployment = find(objects, 'Deployment', service);
      const spec = deployment.spec.template.spec;
      const names = new Set<string>();
      for (const container of containersOf(deployment)) {
        for (const source of container.envFrom ?? []) if (source.secretRef) names.add(source.secretRef.name);
        for (const item of container.env ?? []) if (item.valueFrom?.secretKeyRef) names.add(item.valueFrom.secretKeyRef.name);
      }
      for (const volume of spec.volumes ?? []) {
        if (volume.secret) names.add(volume.secret.secretName);
        for (const projected of volume.projected?.sources ?? []) if (projected.secret) names.add(projected.secret.name);
      }
      expect({ service, mounts: [...names].map((n) => n.replace(/-[a-z0-9]{10}$/, '')) }).toEqual({ service, mounts: expect.arrayContaining([`${service}-secrets`]) });
      for (const name of names) expect({ service, secret: name, own: name.startsWith(`${service}-`) }).toEqual({ service, secret: name, own: true });
    }
    const keys = (name: string) => Object.keys(template[name]!).sort();
    expect(keys('gateway-secrets')).toEqual(['LIMITER_KEY', 'REDIS_URL']);
    // notes holds only the mailer's and the webhooks service's PUBLIC rings: it cannot open what it seals (DECISIONS 1, 11).
    expect(keys('notes-secrets')).toEqual(['AMQP_URL', 'DATABASE_URL', 'LOOKUP_KEY', 'MAIL_PUBLIC_KEYS', 'MASTER_KEYS', 'RECEIPT_SIGNING_KEYS', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY', 'WEBHOOK_PUBLIC_KEYS']);
    expect(keys('stats-secrets')).toEqual(['AMQP_URL', 'DATABASE_URL']);
    expect(keys('mailer-secrets')).toEqual(['AMQP_URL', 'DATABASE_URL', 'MAILER_HASH_KEY', 'SMTP_URL']);
    expect(keys('mailer-mail-keys')).toEqual(['MAIL_PRIVATE_KEYS']);
    expect(keys('webhooks-secrets')).toEqual(['AMQP_URL', 'DATABASE_URL']);
    expect(keys('webhooks-keys')).toEqual(['WEBHOOK_PRIVATE_KEYS']);
    for (const service of ['notes', 'stats', 'mailer', 'webhooks']) {
      expect(new URL(template[`${service}-secrets`]!.AMQP_URL!).username).toBe(service);
      expect(new URL(template[`${service}-secrets`]!.DATABASE_URL!).username).toBe(`vanish_${service}`);
    }
  });

  it('when the Ingress is rendered, then it terminates TLS, routes only to the gateway and keeps note links out of its access log', () => {
    const [ingress] = byKind(objects, 'Ingress');
    expect(ingress!.spec.tls[0].secretName).toBe('vanish-tls');
    expect(ingress!.spec.tls[0].hosts).toEqual([ingress!.spec.rules[0].host]);
    const backends = ingress!.spec.rules.flatMap((r: { http: { paths: { backend: { service: { name: string; port: { name: string } } } }[] } }) => r.http.paths.map((p) => p.backend.service));
    expect(backends).toEqual([{ name: 'gateway', port: { name: 'http' } }]);
    expect(ingress!.metadata.annotations?.['nginx.ingress.kubernetes.io/enable-access-log']).toBe('false');
  });

  it('when the pods are annotated and the ServiceMonitor is rendered, then Prometheus scrapes each admin port', () => {
    for (const service of SERVICES) {
      expect(find(objects, 'Deployment', service).spec.template.metadata.annotations).toEqual({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(PORTS[service].admin), 'prometheus.io/path': '/metrics' });
      expect(matches(find(objects, 'ServiceMonitor', 'vanish').spec.selector.matchLabels, find(objects, 'Service', service).metadata.labels)).toBe(true);
    }
    expect(find(objects, 'ServiceMonitor', 'vanish').spec.endpoints).toEqual([expect.objectContaining({ port: 'admin', path: '/metrics' })]);
  });

  it('when a Deployment reads ConfigMaps, then they are rendered; Secrets are rendered in dev and keyed as the template says', () => {
    const template = secretTemplate();
    for (const service of SERVICES) {
      const container = find(objects, 'Deployment', service).spec.template.spec.containers[0];
      for (const source of container.envFrom) {
        if (source.configMapRef) find(objects, 'ConfigMap', source.configMapRef.name);
        if (source.secretRef) {
          const base = source.secretRef.name.replace(/-[a-z0-9]{10}$/, '');
          expect(template[base]).toBeDefined();
          const rendered = objects.find((o) => o.kind === 'Secret' && o.metadata.name === source.secretRef.name);
          if (overlay === 'dev') expect(Object.keys(dataOf(rendered!)).sort()).toEqual(Object.keys(template[base]!).sort());
          else expect(rendered).toBeUndefined(); // prod Secrets are created out of band, never committed
        }
      }
    }
  });

  if (overlay === 'dev') {
    it('when the dev overlay is rendered, then MySQL, Redis, RabbitMQ and Mailpit run in the cluster and HTTPS is not required', () => {
      expect(find(objects, 'StatefulSet', 'mysql')).toBeDefined();
      expect(find(objects, 'StatefulSet', 'rabbitmq')).toBeDefined();
      expect(find(objects, 'Deployment', 'redis')).toBeDefined();
      expect(find(objects, 'Deployment', 'mailpit')).toBeDefined();
      for (const name of ['mysql', 'redis', 'rabbitmq', 'mailpit']) find(objects, 'Service', name);
      expect(dataOf(find(objects, 'ConfigMap', 'gateway-config')).REQUIRE_HTTPS).toBe('false');
      // Plain HTTP and DEV-ONLY keys: never production (which would refuse REQUIRE_HTTPS=false anyway).
      expect(dataOf(find(objects, 'ConfigMap', 'vanish-common')).NODE_ENV).toBe('development');
    });
  } else {
    it('when the prod overlay says whom the gateway trusts for X-Forwarded-For, then it is one hop (the ingress controller), never a network', () => {
      const trustProxy = dataOf(find(objects, 'ConfigMap', 'gateway-config')).TRUST_PROXY;
      expect(trustProxy).toBe('1');
      expect(trustProxyTooWide(parseTrustProxy(trustProxy))).toBeUndefined();
      // The old value, a whole pod network, is what the check exists to catch.
      expect(trustProxyTooWide(parseTrustProxy('10.0.0.0/8'))).toBe('10.0.0.0/8 is a /8 network');
    });

    it('when the prod overlay is rendered, then it runs no database or broker, requires HTTPS, trusts the ingress and pulls from a registry', () => {
      expect(workloads(objects).map((w) => w.metadata.name).sort()).toEqual([...ALL_SERVICES].sort());
      expect(dataOf(find(objects, 'ConfigMap', 'vanish-common')).NODE_ENV).toBe('production');
      expect(dataOf(find(objects, 'ConfigMap', 'vanish-public')).PUBLIC_BASE_URL).toMatch(/^https:\/\//);
      expect(dataOf(find(objects, 'ConfigMap', 'gateway-config'))).toMatchObject({ REQUIRE_HTTPS: 'true', TRUST_PROXY: expect.any(String) });
      for (const service of ALL_SERVICES) expect(find(objects, 'Deployment', service).spec.template.spec.containers[0].image).toMatch(/^[a-z0-9.-]+\.[a-z]+\/.+:\d+\.\d+\.\d+$/);
    });
  }
});

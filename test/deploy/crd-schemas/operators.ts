// JSON Schemas for the operator resources of the `ha` component whose CRDs no npm package carries
// (KEDA's come from @kubernetes-models/keda). Each is the subset of the operator's published CRD
// (openAPIV3Schema) for the fields vanish sets, with the same types, enums and required fields;
// additionalProperties false where the CRD lists its properties, so a misspelt field fails here as
// the API server's structural-schema pruning would silently drop it there. Sources, by version:
//   RabbitmqCluster  rabbitmq.com/v1beta1       cluster-operator v2.x  config/crd/bases/rabbitmq.com_rabbitmqclusters.yaml
//   RedisFailover    databases.spotahome.com/v1 redis-operator v1.2+   manifests/databases.spotahome.com_redisfailovers.yaml
//   MariaDB          k8s.mariadb.com/v1alpha1   mariadb-operator 0.3x  config/crd/bases/k8s.mariadb.com_mariadbs.yaml
/* eslint-disable @typescript-eslint/no-explicit-any */
const object = (properties: Record<string, any>, required: string[] = [], open = false) =>
  ({ type: 'object', properties, required, additionalProperties: open });
const str = { type: 'string' };
const int = { type: 'integer' };
const bool = { type: 'boolean' };
const anyObject = { type: 'object' };
const quantity = { anyOf: [{ type: 'integer' }, { type: 'string' }] };
const resources = object({ requests: { type: 'object', additionalProperties: quantity }, limits: { type: 'object', additionalProperties: quantity }, claims: { type: 'array' } });
const metadata = object({ name: str, namespace: str, labels: { type: 'object', additionalProperties: str }, annotations: { type: 'object', additionalProperties: str } }, ['name'], true);
const top = (apiVersion: string, kind: string, spec: any) => object({ apiVersion: { const: apiVersion }, kind: { const: kind }, metadata, spec }, ['apiVersion', 'kind', 'metadata', 'spec']);

export const OPERATOR_SCHEMAS: Record<string, any> = {
  'rabbitmq.com/v1beta1 RabbitmqCluster': top('rabbitmq.com/v1beta1', 'RabbitmqCluster', object({
    replicas: { type: 'integer', minimum: 0 },
    image: str,
    imagePullSecrets: { type: 'array' },
    service: object({ type: { enum: ['ClusterIP', 'LoadBalancer', 'NodePort'] }, annotations: anyObject, ipFamilyPolicy: str }),
    persistence: object({ storageClassName: str, storage: quantity }),
    resources,
    affinity: anyObject,
    tolerations: { type: 'array' },
    rabbitmq: object({ additionalConfig: { type: 'string', maxLength: 2000 }, advancedConfig: { type: 'string', maxLength: 100000 }, envConfig: { type: 'string', maxLength: 100000 }, additionalPlugins: { type: 'array', maxItems: 100, items: str }, erlangInetConfig: str }),
    tls: object({ secretName: str, caSecretName: str, disableNonTLSListeners: bool }),
    override: object({ statefulSet: anyObject, service: anyObject }),
    skipPostDeploySteps: bool,
    terminationGracePeriodSeconds: { type: 'integer', minimum: 0 },
    delayStartSeconds: { type: 'integer', minimum: 0 },
    secretBackend: anyObject,
  })),
  'databases.spotahome.com/v1 RedisFailover': top('databases.spotahome.com/v1', 'RedisFailover', object({
    redis: object({
      replicas: { type: 'integer', minimum: 1, maximum: 10 }, image: str, imagePullPolicy: str, resources,
      customConfig: { type: 'array', items: str }, command: { type: 'array', items: str }, storage: anyObject,
      affinity: anyObject, tolerations: { type: 'array' }, nodeSelector: anyObject, podAnnotations: anyObject,
      exporter: anyObject, securityContext: anyObject, containerSecurityContext: anyObject, terminationGracePeriod: int,
      topologySpreadConstraints: { type: 'array' }, priorityClassName: str, serviceAccountName: str,
    }),
    sentinel: object({
      replicas: { type: 'integer', minimum: 3, maximum: 10 }, image: str, imagePullPolicy: str, resources,
      customConfig: { type: 'array', items: str }, command: { type: 'array', items: str },
      affinity: anyObject, tolerations: { type: 'array' }, nodeSelector: anyObject, podAnnotations: anyObject,
      exporter: anyObject, securityContext: anyObject, containerSecurityContext: anyObject,
      topologySpreadConstraints: { type: 'array' }, priorityClassName: str, serviceAccountName: str,
    }),
    auth: object({ secretPath: str }),
    labelWhitelist: { type: 'array', items: str },
    bootstrapNode: anyObject,
  })),
  'k8s.mariadb.com/v1alpha1 MariaDB': top('k8s.mariadb.com/v1alpha1', 'MariaDB', object({
    replicas: { type: 'integer' },
    image: str,
    imagePullPolicy: str,
    rootPasswordSecretKeyRef: object({ name: str, key: str, generate: bool }, ['key']),
    rootEmptyPassword: bool,
    database: str, username: str, passwordSecretKeyRef: anyObject,
    storage: object({ size: quantity, storageClassName: str, ephemeral: bool, resizeInUseVolumes: bool, waitForVolumeResize: bool, volumeClaimTemplate: anyObject }),
    replication: object({
      enabled: bool,
      primary: object({ podIndex: int, automaticFailover: bool }),
      replica: object({ waitPoint: { enum: ['AfterSync', 'AfterCommit'] }, gtid: { enum: ['CurrentPos', 'SlavePos'] }, connectionTimeout: str, connectionRetries: int, syncTimeout: str }),
      syncBinlog: bool, probesEnabled: bool,
    }),
    galera: object({
      enabled: bool,
      primary: object({ podIndex: int, automaticFailover: bool }),
      sst: { enum: ['rsync', 'mariabackup', 'mysqldump'] },
      availableWhenDesync: bool,
      galeraLibPath: str,
      replicaThreads: int,
      providerOptions: { type: 'object', additionalProperties: str },
      agent: anyObject,
      recovery: object({
        enabled: bool, minClusterSize: quantity, clusterMonitorInterval: str, clusterHealthyTimeout: str,
        clusterBootstrapTimeout: str, podRecoveryTimeout: str, podSyncTimeout: str,
      }),
      initContainer: anyObject, initJob: anyObject, config: anyObject,
    }),
    myCnf: str,
    myCnfConfigMapKeyRef: anyObject,
    resources,
    podDisruptionBudget: object({ minAvailable: quantity, maxUnavailable: quantity }),
    affinity: object({ antiAffinityEnabled: bool, podAntiAffinity: anyObject, nodeAffinity: anyObject }),
    topologySpreadConstraints: { type: 'array' },
    tls: anyObject,
    service: anyObject, primaryService: anyObject, secondaryService: anyObject,
    maxScale: anyObject, maxScaleRef: anyObject,
  })),
};

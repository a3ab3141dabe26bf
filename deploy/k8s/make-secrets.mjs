#!/usr/bin/env node
// Writes every Secret a production overlay references, with fresh keys in the formats the services'
// config loaders take (docs/configuration.md, "Key formats") and fresh passwords for each service's own
// database and RabbitMQ user:
//
//   npm run k8s:secrets -- --overlay prod --out ./vanish-secrets \
//     --mysql-host mysql.internal --rabbitmq-host rabbitmq.internal --redis-host redis.internal \
//     --smtp-url 'smtps://USER:PASSWORD@smtp.example.com:465'
//
// Into --out (made 0700 when it does not exist; files 0600): secrets.yaml (the Secrets, for `kubectl apply -f` or your
// sealing tool; never commit it) and users.env (the database and broker users' passwords, to create
// those users: deploy/rabbitmq/set-permissions.sh reads the *_AMQP_PASSWORD ones). Certificates are not
// made here: vanish-tls (the Ingress; cert-manager or your CA) and, for prod-ha, vanish-rabbitmq-tls.
// Plain Node (no dependency, no build). test/deploy/make-secrets.int.test.ts checks that the Secrets are
// exactly those the overlay references and that each service's config accepts them in production.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

/** Secrets of certificates, referenced by the overlays but issued elsewhere. */
export const CERTIFICATE_SECRETS = { prod: ['vanish-tls'], 'prod-ha': ['vanish-tls', 'vanish-rabbitmq-tls'] };

const USAGE = `usage: npm run k8s:secrets -- --overlay prod|prod-ha --out DIR [--namespace vanish]
  [--mysql-host HOST] [--rabbitmq-host HOST] [--redis-host HOST] [--smtp-url URL] [--force]`;

const key = () => randomBytes(32).toString('base64');
const password = () => randomBytes(24).toString('base64url');

/** An X25519 pair as raw 32-byte keys, the private and public rings the mailer and webhooks take. */
function x25519Rings(id) {
  const pair = generateKeyPairSync('x25519');
  const raw = (object, type) => object.export({ format: 'der', type }).subarray(-32).toString('base64');
  return { privateRing: `${id}:${raw(pair.privateKey, 'pkcs8')}`, publicRing: `${id}:${raw(pair.publicKey, 'spki')}` };
}

/**
 * The Secrets of one overlay: name -> data. Pure apart from randomness, so the test can call it.
 * Hosts default to the in-cluster services of prod-ha, or to the template's example hosts for prod.
 */
export function makeSecrets(overlay, options = {}) {
  if (!(overlay in CERTIFICATE_SECRETS)) throw new Error(`unknown overlay "${overlay}": prod or prod-ha`);
  const ha = overlay === 'prod-ha';
  const mysql = options.mysqlHost ?? (ha ? 'vanish-mariadb-primary' : 'mysql.example.internal');
  const rabbitmq = options.rabbitmqHost ?? (ha ? 'vanish-rabbitmq' : 'rabbitmq.example.internal');
  const redis = options.redisHost ?? 'redis.example.internal';
  const smtpUrl = options.smtpUrl ?? 'smtps://USER:PASSWORD@smtp.example.com:465';
  const users = {};
  const database = (service) => {
    const secret = password();
    users[`${service.toUpperCase()}_DB_PASSWORD`] = secret;
    return `mysql://vanish_${service}:${secret}@${mysql}:3306/vanish_${service}?ssl-mode=VERIFY_IDENTITY`;
  };
  const broker = (service) => {
    const secret = password();
    users[`${service.toUpperCase()}_AMQP_PASSWORD`] = secret;
    return `amqps://${service}:${secret}@${rabbitmq}:5671`;
  };
  const mail = x25519Rings('m1');
  const webhooks = x25519Rings('w1');
  const gateway = { LIMITER_KEY: key() };
  users.REDIS_PASSWORD = password();
  // prod-ha: Redis behind the operator's Sentinels, named by components/ha (REDIS_SENTINELS), no URL
  // here; the data nodes' password goes to the gateway and to the RedisFailover (vanish-redis-auth).
  if (ha) gateway.REDIS_PASSWORD = users.REDIS_PASSWORD;
  else gateway.REDIS_URL = `rediss://:${users.REDIS_PASSWORD}@${redis}:6379`;
  const secrets = {
    'gateway-secrets': gateway,
    'notes-secrets': {
      DATABASE_URL: database('notes'),
      AMQP_URL: broker('notes'),
      MASTER_KEYS: `k1:${key()}`,
      LOOKUP_KEY: key(),
      MAIL_PUBLIC_KEYS: mail.publicRing,
      RECEIPT_SIGNING_KEYS: `r1:${key()}`,
      WEBHOOK_PUBLIC_KEYS: webhooks.publicRing,
      // The files bucket's key (docs/files.md): create it on MinIO or Ceph RGW with these values (users.env),
      // or replace both with the key your provider issued (AWS, R2).
      S3_ACCESS_KEY_ID: users.S3_ACCESS_KEY_ID = `vanish-notes-${randomBytes(6).toString('hex')}`,
      S3_SECRET_ACCESS_KEY: users.S3_SECRET_ACCESS_KEY = password(),
    },
    'stats-secrets': { DATABASE_URL: database('stats'), AMQP_URL: broker('stats') },
    'mailer-secrets': { DATABASE_URL: database('mailer'), AMQP_URL: broker('mailer'), SMTP_URL: smtpUrl, MAILER_HASH_KEY: key() },
    'mailer-mail-keys': { MAIL_PRIVATE_KEYS: mail.privateRing },
    'webhooks-secrets': { DATABASE_URL: database('webhooks'), AMQP_URL: broker('webhooks') },
    'webhooks-keys': { WEBHOOK_PRIVATE_KEYS: webhooks.privateRing },
  };
  if (ha) {
    users.MARIADB_ROOT_PASSWORD = password();
    users.KEDA_AMQP_PASSWORD = password();
    secrets['vanish-mariadb-root'] = { password: users.MARIADB_ROOT_PASSWORD };
    secrets['vanish-redis-auth'] = { password: users.REDIS_PASSWORD };
    // KEDA reads queue lengths as a user of its own (monitoring tag, read on the queues only).
    secrets['keda-rabbitmq'] = { host: `amqps://keda:${users.KEDA_AMQP_PASSWORD}@${rabbitmq}:5671/` };
  }
  return { secrets, users };
}

/** JSON strings are YAML scalars: every value is quoted exactly, whatever it holds. */
export function toYaml(secrets, namespace) {
  return Object.entries(secrets).map(([name, data]) => [
    'apiVersion: v1',
    'kind: Secret',
    'metadata:',
    `  name: ${name}`,
    `  namespace: ${namespace}`,
    'type: Opaque',
    'stringData:',
    ...Object.entries(data).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`),
  ].join('\n')).join('\n---\n') + '\n';
}

function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        overlay: { type: 'string' }, out: { type: 'string' }, namespace: { type: 'string', default: 'vanish' },
        'mysql-host': { type: 'string' }, 'rabbitmq-host': { type: 'string' }, 'redis-host': { type: 'string' },
        'smtp-url': { type: 'string' }, force: { type: 'boolean', default: false }, help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (values.help) { process.stdout.write(`${USAGE}\n`); return; }
  if (!values.overlay || !values.out || !(values.overlay in CERTIFICATE_SECRETS)) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const secretsFile = join(values.out, 'secrets.yaml');
  if (existsSync(secretsFile) && !values.force) {
    // Fresh keys over the ones a running deployment uses would lose every note: never silently.
    process.stderr.write(`${secretsFile} exists: these are fresh keys, not a rotation; use --force to replace it\n`);
    process.exit(1);
  }
  const { secrets, users } = makeSecrets(values.overlay, {
    mysqlHost: values['mysql-host'], rabbitmqHost: values['rabbitmq-host'], redisHost: values['redis-host'], smtpUrl: values['smtp-url'],
  });
  // A folder of our own is made private; one that exists is left as it is (it may be a shared one).
  if (!existsSync(values.out)) mkdirSync(values.out, { recursive: true, mode: 0o700 });
  writeFileSync(secretsFile, toYaml(secrets, values.namespace), { mode: 0o600 });
  writeFileSync(join(values.out, 'users.env'), Object.entries(users).map(([k, v]) => `${k}=${v}`).join('\n') + '\n', { mode: 0o600 });
  process.stdout.write([
    `wrote ${secretsFile} (${Object.keys(secrets).join(', ')}) and ${join(values.out, 'users.env')}`,
    `not made here (certificates): ${CERTIFICATE_SECRETS[values.overlay].join(', ')}`,
    'next: create the database and broker users with the passwords in users.env, back up secrets.yaml',
    '(MASTER_KEYS and LOOKUP_KEY: losing them loses every note), then kubectl apply -f the Secrets.',
    '',
  ].join('\n'));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main();

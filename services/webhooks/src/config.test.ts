import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, KeyRing } from '@vanish/common';
import { DEFAULT_RETRY_DELAYS_MS, loadWebhooksConfig } from './config';

const dataDir = mkdtempSync(join(tmpdir(), 'webhooks-config-'));
const production = {
  NODE_ENV: 'production', DATA_DIR: dataDir, DATABASE_URL: 'mysql://u:p@db:3306/webhooks?ssl-mode=VERIFY_IDENTITY', AMQP_URL: 'amqps://u:p@mq:5671',
  WEBHOOK_PRIVATE_KEYS: KeyRing.generate('w1').serialize(),
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadWebhooksConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('loadWebhooksConfig', () => {
  it('when nothing is set, then the embedded defaults apply: SQLite in DATA_DIR, admin port 9084, a retry schedule of about a day', () => {
    const config = loadWebhooksConfig({ DATA_DIR: dataDir });
    expect(config.databaseUrl).toBe(`sqlite:${join(dataDir, 'webhooks.db')}`);
    expect(config.adminPort).toBe(9084);
    const totalHours = DEFAULT_RETRY_DELAYS_MS.reduce((sum, d) => sum + d, 0) / 3_600_000;
    expect(totalHours).toBeGreaterThan(22);
    expect(totalHours).toBeLessThan(26);
    expect(config.timeoutMs).toBe(5_000);
    expect(config.allowPrivateNetworks).toBe(false);
  });

  it('when production is fully configured, then it starts', () => {
    expect(problemsOf(production)).toEqual([]);
  });

  it('when production allows private networks, then it is refused by name', () => {
    expect(problemsOf({ ...production, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }).join('\n')).toMatch(/^WEBHOOK_ALLOW_PRIVATE_NETWORKS: refused with NODE_ENV=production/m);
  });

  it('when production lacks its keys and broker, then each is named', () => {
    const problems = problemsOf({ NODE_ENV: 'production', DATA_DIR: dataDir }).join('\n');
    for (const name of ['DATABASE_URL', 'AMQP_URL', 'WEBHOOK_PRIVATE_KEYS']) expect(problems).toContain(`${name}:`);
  });

  it('when operator subscriptions are given, then they are read with a stable id and no IP unless asked; http is refused in production', () => {
    const subs = JSON.stringify([
      { url: 'https://siem.example.com/in', secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` },
      { url: 'https://audit.example.com/in', secret: `whsec_${Buffer.alloc(24, 2).toString('base64')}`, include_ip_address: true },
    ]);
    const config = loadWebhooksConfig({ ...production, WEBHOOK_SUBSCRIPTIONS: subs });
    expect(config.subscriptions.map((s) => [s.url, s.includeIpAddress])).toEqual([['https://siem.example.com/in', false], ['https://audit.example.com/in', true]]);
    expect(config.subscriptions[0]!.id).toMatch(/^op:[0-9a-f]{16}$/);
    expect(config.subscriptions[0]!.id).not.toContain('siem');
    const plain = JSON.stringify([{ url: 'http://siem.example.com/in', secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` }]);
    expect(problemsOf({ ...production, WEBHOOK_SUBSCRIPTIONS: plain }).join('\n')).toMatch(/WEBHOOK_SUBSCRIPTIONS\[0\]: url must use https/);
    expect(problemsOf({ ...production, WEBHOOK_SUBSCRIPTIONS: '[{"url":"https://x.example","secret":"nope"}]' }).join('\n')).toMatch(/secret must be/);
  });

  it('when WEBHOOK_RETRY_DELAYS_MS is malformed, then it is refused', () => {
    expect(problemsOf({ DATA_DIR: dataDir, WEBHOOK_RETRY_DELAYS_MS: '100,abc' }).join('\n')).toMatch(/WEBHOOK_RETRY_DELAYS_MS/);
  });
});

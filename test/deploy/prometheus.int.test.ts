// The Prometheus files under deploy/, checked with Debian's promtool (package `prometheus`):
// the alert rules parse and behave as their unit tests say, the compose scrape config is valid,
// the Prometheus Operator copy of the rules is identical, and every Grafana query is valid PromQL.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { ROOT, readText } from './deploy-files';

function promtool(...args: string[]): string {
  try {
    return execFileSync('promtool', args, { cwd: join(ROOT, 'deploy/prometheus'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { code?: string; stdout?: string; stderr?: string };
    if (e.code === 'ENOENT') throw new Error('promtool is not installed: apt-get install -y prometheus (it provides /usr/bin/promtool)');
    throw new Error(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  }
}

describe('Prometheus rules and configuration', () => {
  it('when promtool checks the alert rules, then they are valid and every required alert is there', () => {
    expect(promtool('check', 'rules', 'alerts.yml')).toMatch(/SUCCESS: \d+ rules found/);
    const alerts = YAML.parse(readText('deploy/prometheus/alerts.yml')).groups.flatMap((g: { rules: { alert: string }[] }) => g.rules.map((r) => r.alert));
    expect(alerts).toEqual(expect.arrayContaining([
      'VanishHigh5xxRate', 'VanishOutboxBacklogGrowing', 'VanishDeadLettersPresent', 'VanishStatsLagging', 'VanishLimiterInFallback',
      'VanishTlsCertificateExpiringSoon', 'VanishTlsReloadFailing', 'VanishDependencyUnreachable',
    ]));
  });

  it('when promtool runs the alert unit tests, then each alert fires on its scenario and stays quiet otherwise', () => {
    expect(promtool('test', 'rules', 'alerts.test.yml')).toContain('SUCCESS');
  });

  it('when promtool checks the compose Prometheus configuration, then it is valid', () => {
    expect(promtool('check', 'config', 'prometheus.yml')).toMatch(/SUCCESS/);
  });

  it('when the Prometheus Operator rule is rendered, then its groups equal deploy/prometheus/alerts.yml', () => {
    const operator = YAML.parse(readText('deploy/k8s/components/service-monitor/prometheus-rule.yaml'));
    const plain = YAML.parse(readText('deploy/prometheus/alerts.yml'));
    expect(operator.spec.groups).toEqual(plain.groups);
  });

  it('when the alerts and the dashboard name a vanish metric, then some service or package registers that metric', () => {
    const sources = execFileSync('grep', ['-rhoE', "name: '[a-z_]+'|registry, '[a-z_]+'|httpMetrics\\([a-zA-Z.]+, '[a-z]+'\\)", 'services', 'packages', '--include=*.ts', '--exclude=*.test.ts'], { cwd: ROOT, encoding: 'utf8' });
    const registered = new Set([...sources.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!));
    for (const prefix of [...sources.matchAll(/httpMetrics\([a-zA-Z.]+, '([a-z]+)'\)/g)].map((m) => m[1]!)) registered.add(`${prefix}_http_request_duration_seconds`);
    const failureCounters = execFileSync('grep', ['-rhoE', "dependencyFailureCounter\\(registry, '[a-z]+'\\)", 'services', '--include=*.ts', '--exclude=*.test.ts'], { cwd: ROOT, encoding: 'utf8' });
    for (const [, prefix] of failureCounters.matchAll(/'([a-z]+)'/g)) registered.add(`${prefix}_dependency_failures_total`);
    const used = new Set<string>();
    const texts = [readText('deploy/prometheus/alerts.yml'), readText('deploy/grafana/vanish-dashboard.json')];
    for (const text of texts) {
      for (const [name] of text.matchAll(/\b(?:gateway|notes|stats|mailer|webhooks?|outbox|bus)_[a-z_]+\b/g)) used.add(name.replace(/_(bucket|count|sum)$/, ''));
    }
    expect(used.size).toBeGreaterThan(10);
    expect([...used].filter((name) => !registered.has(name)).sort()).toEqual([]);
  });

  it('when the Grafana dashboard is loaded, then it is one dashboard whose every query is valid PromQL', () => {
    const dashboard = JSON.parse(readText('deploy/grafana/vanish-dashboard.json'));
    expect(dashboard).toMatchObject({ uid: 'vanish-overview', title: 'vanish' });
    const exprs: string[] = dashboard.panels.flatMap((p: { targets?: { expr: string }[] }) => (p.targets ?? []).map((t) => t.expr));
    expect(exprs.length).toBeGreaterThan(15);
    for (const metric of ['gateway_http_request_duration_seconds', 'notes_http_request_duration_seconds', 'outbox_backlog_messages', 'mailer_emails_dead_lettered_total', 'gateway_rate_limited_total', 'gateway_limiter_store_up', 'notes_created_total', 'stats_consumer_lag_seconds',
      'webhook_deliveries_total', 'webhook_delivery_attempts_total', 'webhook_delivery_duration_seconds', 'webhook_queue_depth', 'webhook_open_circuits',
      'notes_dependency_failures_total', 'stats_dependency_failures_total', 'mailer_dependency_failures_total', 'webhooks_dependency_failures_total']) {
      expect({ metric, used: exprs.some((e) => e.includes(metric)) }).toEqual({ metric, used: true });
    }
    // promtool has no "parse this expression" command: wrap each query in a recording rule.
    const dir = mkdtempSync(join(tmpdir(), 'vanish-dashboard-'));
    try {
      const file = join(dir, 'dashboard-queries.yml');
      writeFileSync(file, YAML.stringify({ groups: [{ name: 'dashboard', rules: exprs.map((expr, i) => ({ record: `vanish:dashboard_query_${i}`, expr })) }] }));
      expect(promtool('check', 'rules', file)).toContain(`SUCCESS: ${exprs.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Supply chain: scripts/release-sbom.sh writes one CycloneDX SBOM per image (the five services and the
// all-in-one) from the lockfile, with production dependencies only. (`npm audit --omit=dev --audit-level=high` needs the
// registry's audit endpoint, which this machine's registry mirror refuses: docs/operations.md.)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_SERVICES, ROOT } from './deploy-files';

jest.setTimeout(120_000);

describe('release SBOMs', () => {
  it('when the release SBOM script runs, then each service gets a CycloneDX SBOM of its production dependencies only', () => {
    const out = mkdtempSync(join(tmpdir(), 'vanish-sbom-'));
    try {
      execFileSync('bash', [join(ROOT, 'scripts/release-sbom.sh'), out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      const expected: Record<string, string[]> = {
        gateway: ['express', 'ioredis', 'rate-limiter-flexible', 'prom-client'],
        notes: ['express', 'knex', 'mysql2', 'amqplib', 'qrcode'],
        stats: ['express', 'knex', 'mysql2', 'amqplib'],
        mailer: ['express', 'knex', 'mysql2', 'amqplib', 'nodemailer'],
        webhooks: ['express', 'knex', 'mysql2', 'amqplib'],
        // The embedded defaults: SQLite compiled in, every service's dependencies in one process.
        'all-in-one': ['better-sqlite3', 'express', 'ioredis', 'knex', 'nodemailer', 'qrcode', 'pino-pretty'],
      };
      for (const service of [...ALL_SERVICES, 'all-in-one']) {
        const sbom = JSON.parse(readFileSync(join(out, `vanish-${service}.cdx.json`), 'utf8')) as { bomFormat: string; components: { name: string; version: string }[] };
        expect(sbom.bomFormat).toBe('CycloneDX');
        const names = sbom.components.map((c) => c.name);
        expect(names).toEqual(expect.arrayContaining(expected[service]!));
        const devOnlyNames = ['typescript', 'jest', '@swc/core', 'playwright-core', ...(service === 'all-in-one' ? [] : ['better-sqlite3'])];
        for (const devOnly of devOnlyNames) expect({ service, devOnly, present: names.includes(devOnly) }).toEqual({ service, devOnly, present: false });
        if (service === 'gateway') expect(names).not.toContain('knex');
        expect(sbom.components.every((c) => /^\d+\.\d+\.\d+/.test(c.version))).toBe(true);
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});

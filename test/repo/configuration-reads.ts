// What the code reads from its environment, found two ways for docs/configuration.md's check:
// statically (every variable-shaped string literal and `env.NAME` in the files that read an
// environment) and by running each program's config loader over a recording environment (which
// variables each program reads, whether it also reads NAME_FILE, and the fallback it passes).
import { readFileSync, readdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ConfigError, EnvReader, silentLogger, type Env } from '@vanish/common';
import { loadAllInOneConfig } from '../../services/all-in-one/src/config';
import { declareVanishTopology } from '../../services/all-in-one/src/cli/declare-topology';
import { wantsReadableLogs } from '../../services/all-in-one/src/first-run';
import { loadGatewayConfig } from '../../services/gateway/src/config';
import { loadMailerConfig } from '../../services/mailer/src/config';
import { loadNotesConfig } from '../../services/notes/src/config';
import { loadStatsConfig } from '../../services/stats/src/config';
import { loadWebhooksConfig } from '../../services/webhooks/src/config';

export const ROOT = join(__dirname, '..', '..');

/** The programs that read an environment, by the name the reference's "read by" column uses. */
export const PROGRAMS = ['gateway', 'notes', 'stats', 'mailer', 'webhooks', 'all-in-one', 'declare-topology'] as const;
export type Program = (typeof PROGRAMS)[number];

/**
 * Variable-shaped literals in those files that are not variables. A new literal of that shape must be
 * either documented or added here, so the static scan stays exact.
 */
export const NOT_VARIABLES = new Set(['OKP', 'READONLY', 'X25519']);

/** Source folders of the programs above and the packages whose helpers read for them (not the CLI: docs/cli). */
const SOURCE_DIRS = ['services/gateway/src', 'services/notes/src', 'services/stats/src', 'services/mailer/src', 'services/webhooks/src',
  'services/all-in-one/src', 'packages/common/src', 'packages/bus/src', 'packages/database/src'];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return /\.ts$/.test(entry) && !/\.test\.ts$/.test(entry) ? [path] : [];
  });
}

/** Every file that reads an environment (an EnvReader, an Env, process.env) and the names it mentions. */
export function namesInCode(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of SOURCE_DIRS.flatMap(sourceFiles)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    if (!/\bEnvReader\b|\bEnv\b|process\.env/.test(text)) continue;
    const names = [
      ...[...text.matchAll(/['"`]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)['"`]/g)].map((m) => m[1]!),
      ...[...text.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)].map((m) => m[1]!),
    ].filter((name) => !NOT_VARIABLES.has(name));
    for (const name of names) found.set(name, [...new Set([...(found.get(name) ?? []), relative(ROOT, join(ROOT, file))])]);
  }
  return found;
}

export interface Reads {
  /** Program -> variables it read. */
  byProgram: Map<Program, Set<string>>;
  /** Variables read without their NAME_FILE form (read directly, not through EnvReader.raw). */
  withoutFileForm: Set<string>;
  /** Variable -> program -> the fallbacks passed to EnvReader's typed readers. */
  fallbacks: Map<string, Map<Program, unknown[]>>;
}

/**
 * Environments that together take every branch that reads: empty (embedded defaults), production, and
 * one that sets every dependency so their optional settings (Sentinels, cluster, SMTP pool, TLS files,
 * plaintext opt-outs) are read too. Loaders refuse most of these; what matters is what they read.
 */
function scenarios(dataDir: string): Env[] {
  const everything: Record<string, string> = {
    DATA_DIR: dataDir,
    REDIS_URL: 'redis://redis:6379', REDIS_SENTINELS: 'sentinel:26379', REDIS_SENTINEL_NAME: 'vanish', REDIS_CLUSTER_NODES: 'redis:7000',
    SMTP_URL: 'smtp://mail:25', AMQP_URL: 'amqp://broker', DATABASE_URL: 'mysql://u:p@db:3306/vanish',
    TLS_CERT_FILE: join(dataDir, 'none.crt'), TLS_KEY_FILE: join(dataDir, 'none.key'),
    WEBHOOK_PUBLIC_KEYS: 'w1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', MAIL_KEYS: 'k1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
  };
  return [
    { DATA_DIR: dataDir },
    { DATA_DIR: dataDir, NODE_ENV: 'production' },
    everything,
    { ...everything, NODE_ENV: 'production' },
  ];
}

const LOADERS: Record<Program, (env: Env) => unknown> = {
  gateway: (env) => loadGatewayConfig(env, silentLogger),
  notes: (env) => loadNotesConfig(env, silentLogger),
  stats: (env) => loadStatsConfig(env),
  mailer: (env) => loadMailerConfig(env, silentLogger),
  webhooks: (env) => loadWebhooksConfig(env, silentLogger),
  // Its own settings and the log format; the banner only describes what the services read.
  'all-in-one': (env) => { wantsReadableLogs(env, false); return loadAllInOneConfig(env); },
  // Fails before it connects (no broker in these environments, or refused): it has read everything by then.
  'declare-topology': (env) => declareVanishTopology(env as NodeJS.ProcessEnv).catch(() => undefined),
};

const TYPED_READERS = ['str', 'int', 'bool', 'oneOf', 'url'] as const;

export async function readsOfEveryProgram(): Promise<Reads> {
  const byProgram = new Map<Program, Set<string>>();
  const fallbacks = new Map<string, Map<Program, unknown[]>>();
  const rawReads = new Set<string>();
  let current: Program = 'gateway';
  const originals = TYPED_READERS.map((method) => [method, EnvReader.prototype[method]] as const);
  for (const [method, original] of originals) {
    (EnvReader.prototype as unknown as Record<string, unknown>)[method] = function (this: EnvReader, name: string, ...rest: unknown[]) {
      const fallback = method === 'oneOf' ? rest[1] : rest[0];
      if (fallback !== undefined) {
        const perProgram = fallbacks.get(name) ?? new Map<Program, unknown[]>();
        fallbacks.set(name, perProgram);
        const list = perProgram.get(current) ?? [];
        if (!list.some((seen) => seen === fallback)) list.push(fallback);
        perProgram.set(current, list);
      }
      return (original as (...args: unknown[]) => unknown).call(this, name, ...rest);
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'vanish-config-reads-'));
  try {
    for (const program of PROGRAMS) {
      current = program;
      const read = new Set<string>();
      byProgram.set(program, read);
      for (const env of scenarios(dataDir)) {
        const watched = new Proxy({ ...env }, {
          get(target, key) {
            if (typeof key === 'string') read.add(key);
            return Reflect.get(target, key);
          },
        });
        try {
          await LOADERS[program](watched);
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
        }
      }
      for (const name of read) if (name.endsWith('_FILE') && read.has(name.slice(0, -'_FILE'.length))) rawReads.add(name.slice(0, -'_FILE'.length));
    }
  } finally {
    for (const [method, original] of originals) (EnvReader.prototype as unknown as Record<string, unknown>)[method] = original;
    rmSync(dataDir, { recursive: true, force: true });
  }
  // NAME_FILE is how a variable is given from a file, not a variable of its own.
  for (const [program, read] of byProgram) {
    byProgram.set(program, new Set([...read].filter((name) => !(name.endsWith('_FILE') && rawReads.has(name.slice(0, -'_FILE'.length))))));
  }
  const all = new Set([...byProgram.values()].flatMap((set) => [...set]));
  const withoutFileForm = new Set([...all].filter((name) => !rawReads.has(name)));
  return { byProgram, withoutFileForm, fallbacks };
}

/** Fallbacks a reference can state: not computed from the machine (its hostname, a temp folder) nor empty. */
export function isStatable(fallback: unknown): boolean {
  if (typeof fallback === 'string') return fallback !== '' && !fallback.includes(tmpdir()) && !fallback.includes(hostname());
  return typeof fallback === 'number' || typeof fallback === 'boolean';
}

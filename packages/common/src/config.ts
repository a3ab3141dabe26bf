import { readFileSync } from 'node:fs';

export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Reads typed values from an environment and collects every problem, so that a bad deployment
 * learns everything that is wrong with it at once. Call `done()` after reading to throw them.
 */
export class EnvReader {
  private readonly problems: string[] = [];

  constructor(private readonly env: Env) {}

  get isProduction(): boolean {
    return this.env.NODE_ENV === 'production';
  }

  /** The raw value, or the content of the file named by NAME_FILE (for secrets). */
  raw(name: string): string | undefined {
    const fileName = this.env[`${name}_FILE`];
    if (fileName !== undefined && fileName !== '') {
      try {
        return readFileSync(fileName, 'utf8').trim();
      } catch (err) {
        this.problems.push(`${name}_FILE: cannot read ${fileName} (${(err as Error).message})`);
        return undefined;
      }
    }
    const value = this.env[name];
    return value === undefined || value === '' ? undefined : value;
  }

  str(name: string, fallback: string): string;
  str(name: string): string | undefined;
  str(name: string, fallback?: string): string | undefined {
    return this.raw(name) ?? fallback;
  }

  int(name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    const { min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER } = range;
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
      this.problems.push(`${name}: expected an integer from ${min} to ${max}, got "${value}"`);
      return fallback;
    }
    return parsed;
  }

  bool(name: string, fallback: boolean): boolean {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (/^(1|true|yes|on)$/i.test(value)) return true;
    if (/^(0|false|no|off)$/i.test(value)) return false;
    this.problems.push(`${name}: expected true or false, got "${value}"`);
    return fallback;
  }

  oneOf<T extends string>(name: string, choices: readonly T[], fallback: T): T {
    const value = this.raw(name);
    if (value === undefined) return fallback;
    if (!(choices as readonly string[]).includes(value)) {
      this.problems.push(`${name}: expected one of ${choices.join(', ')}, got "${value}"`);
      return fallback;
    }
    return value as T;
  }

  url(name: string, fallback: string, protocols?: readonly string[]): string;
  url(name: string, fallback?: undefined, protocols?: readonly string[]): string | undefined;
  url(name: string, fallback?: string, protocols?: readonly string[]): string | undefined {
    const value = this.raw(name) ?? fallback;
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (protocols && !protocols.includes(parsed.protocol)) {
        this.problems.push(`${name}: expected a ${protocols.join(' or ')} URL, got "${parsed.protocol}"`);
      }
    } catch {
      this.problems.push(`${name}: not a valid URL`);
    }
    return value;
  }

  /** Production must never fall back silently to an embedded default (DECISIONS 10). */
  requireInProduction(name: string, value: unknown, what: string): void {
    if (this.isProduction && (value === undefined || value === '')) {
      this.problems.push(`${name}: required with NODE_ENV=production (${what})`);
    }
  }

  /**
   * Production refuses an explicit value that weakens it, as it refuses the embedded defaults: the
   * operator learns which variable and why, instead of a deployment quietly running insecure.
   */
  refuseInProduction(name: string, insecure: boolean, why: string): void {
    if (this.isProduction && insecure) this.problems.push(`${name}: refused with NODE_ENV=production (${why})`);
  }

  /**
   * PUBLIC_BASE_URL, read alike by every service that names the public origin: an http(s) URL, and
   * with NODE_ENV=production an https one, unless ALLOW_INSECURE_PUBLIC_BASE_URL=true says the origin
   * is on a private network (the only thing that override relaxes).
   */
  publicBaseUrl(fallback: string): string;
  publicBaseUrl(fallback?: undefined): string | undefined;
  publicBaseUrl(fallback?: string): string | undefined {
    const allowInsecure = this.bool('ALLOW_INSECURE_PUBLIC_BASE_URL', false);
    const explicit = this.url('PUBLIC_BASE_URL', undefined, ['http:', 'https:']);
    const insecure = explicit !== undefined && /^http:/i.test(explicit.trim()) && !allowInsecure;
    this.refuseInProduction('PUBLIC_BASE_URL', insecure,
      'links and redirects would send note links over plain http; use https://, or set ALLOW_INSECURE_PUBLIC_BASE_URL=true for an origin on a private network');
    return (explicit ?? fallback)?.replace(/\/+$/, '');
  }

  problem(message: string): void {
    this.problems.push(message);
  }

  done(): void {
    if (this.problems.length > 0) throw new ConfigError(this.problems);
  }
}

/**
 * Production refuses a dependency reached in plaintext, or over TLS that does not verify the
 * server (docs/operations.md, TLS), unless the operator sets `optOut=true` and so names the risk:
 * a path attacker could read or change that traffic. `risk` says what is wrong, or is undefined
 * when the connection is verified TLS. Outside production it is allowed.
 */
export function refuseInsecureTransportInProduction(
  reader: EnvReader,
  check: { variable: string; risk: string | undefined; optOut: string },
): void {
  const optedOut = reader.bool(check.optOut, false); // read always: a deploy file may set it outside production too
  if (!reader.isProduction || check.risk === undefined || optedOut) return;
  reader.problem(`${check.variable}: ${check.risk}; refused with NODE_ENV=production unless ${check.optOut}=true accepts that a path attacker can read and change this traffic`);
}

/**
 * A CA bundle (PEM) to trust for one dependency's TLS, from NAME or the file named by NAME_FILE
 * (e.g. REDIS_TLS_CA_FILE); undefined when neither is set (Node's public roots are used then).
 */
export function readTlsCa(reader: EnvReader, name: string): string | undefined {
  const pem = reader.raw(name);
  if (pem !== undefined && !pem.includes('-----BEGIN CERTIFICATE-----')) {
    reader.problem(`${name}: expected PEM certificates (-----BEGIN CERTIFICATE-----)`);
    return undefined;
  }
  return pem;
}

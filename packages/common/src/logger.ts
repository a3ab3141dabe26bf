import pino from 'pino';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A category below this one: `notes` then `access` is `notes/access`, one `category` key per line. */
  child(category: string): Logger;
  /** Writes out whatever the destination still holds (a no-op for the synchronous default). */
  flush?(): void;
  /**
   * Whether a line at this level would be written. A per-request line whose level is off can skip
   * the work of gathering its fields (the gateway's access log at LOG_LEVEL=warn). Absent: assume yes.
   */
  isEnabled?(level: Exclude<LogLevel, 'silent'>): boolean;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Field names whose values are never logged, wherever they appear. */
const REDACTED_FIELDS = [
  'uuid', 'content', 'passcode', 'email', 'to', 'notification_email', 'send_link_email', 'link', 'url',
  'req.headers.cookie', 'req.headers.authorization',
];

/**
 * Keys every line already has. A field of the same name would write the key twice (pino does not
 * merge), which strict JSON parsers and many log pipelines refuse: such a field is renamed.
 */
const LINE_KEYS = ['level', 'time', 'service', 'category', 'msg'] as const;

function withoutLineKeys(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  if (fields === undefined) return {};
  if (!LINE_KEYS.some((key) => key in fields)) return fields;
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) renamed[(LINE_KEYS as readonly string[]).includes(key) ? `field_${key}` : key] = value;
  return renamed;
}

/** `notes` + `notes/access` → `notes/access`; `notes` + `bus/rabbitmq` → `notes/bus/rabbitmq`. */
function joinCategory(parent: string | undefined, name: string): string {
  if (parent === undefined || name === parent || name.startsWith(`${parent}/`)) return name;
  return `${parent}/${name}`;
}

class PinoLogger implements Logger {
  private readonly target: pino.Logger;

  /** Children bind their category on the root, never on a child: pino would repeat the key. */
  constructor(private readonly root: pino.Logger, private readonly flushDestination: () => void, private readonly category?: string) {
    this.target = category === undefined ? root : root.child({ category });
  }

  debug(msg: string, fields?: Record<string, unknown>): void { this.target.debug(withoutLineKeys(fields), msg); }
  info(msg: string, fields?: Record<string, unknown>): void { this.target.info(withoutLineKeys(fields), msg); }
  warn(msg: string, fields?: Record<string, unknown>): void { this.target.warn(withoutLineKeys(fields), msg); }
  error(msg: string, fields?: Record<string, unknown>): void { this.target.error(withoutLineKeys(fields), msg); }
  child(category: string): Logger { return new PinoLogger(this.root, this.flushDestination, joinCategory(this.category, category)); }
  flush(): void { this.flushDestination(); }
  isEnabled(level: Exclude<LogLevel, 'silent'>): boolean { return this.target.isLevelEnabled(level); }
}

/**
 * JSON lines on stdout (or the given stream), one logger per service, children per category.
 *
 * stdout is written synchronously: a line is in the file (or pipe) when the call returns, so no
 * exit (a signal, a fatal error, a SIGKILL after a shutdown overran its bound) can lose the lines
 * before it. The asynchronous destination kept lines in memory while a write was under way; a
 * process killed then lost them, and at exit the queued lines overtook the one being written.
 * It cost no less CPU per line (docs/operations.md, Logs).
 */
export function createLogger(service: string, level: LogLevel = 'info', destination?: pino.DestinationStream): Logger {
  const stream = destination ?? pino.destination({ sync: true });
  const base = pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_FIELDS, censor: '[redacted]' },
    },
    stream,
  );
  return new PinoLogger(base, () => flushSync(stream));
}

function flushSync(stream: pino.DestinationStream): void {
  const flushable = stream as { flushSync?: () => void };
  if (typeof flushable.flushSync !== 'function') return;
  try {
    flushable.flushSync();
  } catch {
    // Not open yet or already closed: nothing of ours is waiting in it.
  }
}

/** For tests and tools that must not print. */
export const silentLogger: Logger = {
  debug() {}, info() {}, warn() {}, error() {},
  child() { return silentLogger; },
  flush() {},
  isEnabled() { return false; },
};

/** `alice@example.com` → `a***@e***.com`: enough to tell addresses apart in a log, not to use them. */
export function maskEmail(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1) return '***';
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  const dot = domain.lastIndexOf('.');
  const tld = dot > 0 ? domain.slice(dot) : '';
  return `${local[0]}***@${domain[0] ?? ''}***${tld}`;
}

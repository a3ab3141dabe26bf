import pino from 'pino';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(category: string): Logger;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** Field names whose values are never logged, wherever they appear. */
const REDACTED_FIELDS = [
  'uuid', 'content', 'passcode', 'email', 'to', 'notification_email', 'send_link_email', 'link', 'url',
  'req.headers.cookie', 'req.headers.authorization',
];

class PinoLogger implements Logger {
  constructor(private readonly target: pino.Logger) {}
  debug(msg: string, fields?: Record<string, unknown>): void { this.target.debug(fields ?? {}, msg); }
  info(msg: string, fields?: Record<string, unknown>): void { this.target.info(fields ?? {}, msg); }
  warn(msg: string, fields?: Record<string, unknown>): void { this.target.warn(fields ?? {}, msg); }
  error(msg: string, fields?: Record<string, unknown>): void { this.target.error(fields ?? {}, msg); }
  child(category: string): Logger { return new PinoLogger(this.target.child({ category })); }
}

/** JSON lines on stdout (or the given stream), one logger per service, children per category. */
export function createLogger(service: string, level: LogLevel = 'info', destination?: pino.DestinationStream): Logger {
  const base = pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_FIELDS, censor: '[redacted]' },
    },
    destination ?? pino.destination({ sync: false }),
  );
  return new PinoLogger(base);
}

/** For tests and tools that must not print. */
export const silentLogger: Logger = {
  debug() {}, info() {}, warn() {}, error() {},
  child() { return silentLogger; },
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

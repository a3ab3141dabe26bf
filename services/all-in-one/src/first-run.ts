import { writeSync } from 'node:fs';
import { join } from 'node:path';
import type pino from 'pino';
import { isColorSupported, prettyFactory } from 'pino-pretty';
import type { Env, Logger } from '@vanish/common';
import type { AllInOneConfig, ServiceName, ServicePorts } from './config';

/**
 * `npm start` in a terminal speaks to a person: readable lines and a banner. Everywhere else (a pipe, a
 * file, a container, CI) the lines stay JSON, one object each, exactly as the services write them.
 * LOG_FORMAT=json or LOG_FORMAT=pretty overrides what the terminal check decides.
 */
export function wantsReadableLogs(env: Env, stdoutIsTerminal: boolean): boolean {
  if (env.LOG_FORMAT === 'json') return false;
  if (env.LOG_FORMAT === 'pretty') return true;
  return stdoutIsTerminal;
}

/**
 * A pino destination that turns each JSON line into a readable one (pino-pretty's formatter) and writes
 * it to the file descriptor at once, as the JSON destination does (sync: true): no line waits in memory,
 * so every exit path keeps its last lines, and flushing has nothing to do. Colours only where the
 * terminal takes them (pino-pretty's own check, which honours NO_COLOR).
 */
export function readableDestination(fd = 1, colorize = isColorSupported): pino.DestinationStream {
  const prettify = prettyFactory({
    colorize,
    singleLine: true,
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname,service,category',
    messageFormat: '{if category}{category}: {end}{msg}',
  });
  return {
    write(line: string) {
      writeSync(fd, prettify(line));
    },
  };
}

/** Lines that help an operator reading JSON but are noise to a person at a terminal: shown at debug. */
function isRoutine(msg: string, fields: Record<string, unknown> | undefined, inAccessCategory: boolean): boolean {
  if (msg === 'request' && inAccessCategory) return true;
  if (msg === 'shutting down') return true;
  return (msg === 'started' || msg === 'stopped') && typeof fields?.component === 'string';
}

/**
 * The all-in-one's logger at a terminal: requests (and each service's start and stop) at debug instead
 * of info, so that the terminal shows the banner, warnings and errors, and one line when Ctrl-C stops it.
 * LOG_LEVEL=debug shows them again.
 */
export class RoutineAtDebug implements Logger {
  constructor(private readonly inner: Logger, private readonly inAccessCategory = false) {}

  debug(msg: string, fields?: Record<string, unknown>): void { this.inner.debug(msg, fields); }
  info(msg: string, fields?: Record<string, unknown>): void {
    if (isRoutine(msg, fields, this.inAccessCategory)) this.inner.debug(msg, fields);
    else this.inner.info(msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void { this.inner.warn(msg, fields); }
  error(msg: string, fields?: Record<string, unknown>): void { this.inner.error(msg, fields); }
  child(category: string): Logger {
    return new RoutineAtDebug(this.inner.child(category), this.inAccessCategory || category.split('/').includes('access'));
  }
  flush(): void { this.inner.flush?.(); }
}

/**
 * The few lines a person needs after `npm start`: where to go, what was written where and must be kept,
 * and which embedded stand-ins (SQLite, in-process bus, in-memory limits, mail to files) are in use.
 */
export function firstRunBanner(config: AllInOneConfig, ports: Partial<Record<ServiceName, ServicePorts>>): string {
  const env = config.baseEnv;
  const gatewayPort = ports.gateway?.port ?? config.ports.gateway.port;
  const url = env.PUBLIC_BASE_URL ?? `http://localhost:${gatewayPort}`;
  const keysDir = join(config.dataDir, 'keys');
  const generatedKeys = ['MASTER_KEYS', 'LOOKUP_KEY', 'MAIL_PRIVATE_KEYS'].filter((name) => env[name] === undefined && env[`${name}_FILE`] === undefined);
  const sqlite = Object.entries(config.databaseUrls).filter(([, url]) => url.startsWith('sqlite:')).map(([name]) => name);
  const defaults = [
    sqlite.length > 0 ? `SQLite for ${sqlite.join(', ')} (DATABASE_URL per service to change)` : undefined,
    'the in-process bus (no RabbitMQ)',
    env.REDIS_URL === undefined ? 'in-memory rate limits (REDIS_URL to change)' : undefined,
    env.FILE_STORAGE === undefined || env.FILE_STORAGE === 'fs' ? `files of notes stored under ${join(config.dataDir, 'files')} (FILE_STORAGE=s3 for a bucket)` : undefined,
    env.SMTP_URL === undefined ? `e-mails written as files to ${env.MAIL_OUTBOX_DIR ?? join(config.dataDir, 'outbox')} (SMTP_URL to send them)` : undefined,
    generatedKeys.length > 0 ? `keys generated once: ${generatedKeys.join(', ')}` : undefined,
  ].filter((line): line is string => line !== undefined);
  return [
    '',
    `  vanish is running: open ${url}/`,
    '',
    `  data:     ${config.dataDir}`,
    generatedKeys.length > 0
      ? `  back up:  ${keysDir} (losing these keys loses every note)`
      : '  back up:  your key settings (MASTER_KEYS, LOOKUP_KEY, MAIL_PRIVATE_KEYS): losing them loses every note',
    `  defaults: ${defaults.join(';\n            ')}`,
    '',
    '  Ctrl-C stops. Requests are logged at LOG_LEVEL=debug; LOG_FORMAT=json gives JSON lines.',
    '',
    '',
  ].join('\n');
}

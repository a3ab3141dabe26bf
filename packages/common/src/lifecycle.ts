import { ConfigError } from './config';
import { ListenError } from './listen-error';
import type { Logger } from './logger';

type Exit = (code: number) => void;
const processExit: Exit = (code) => process.exit(code);

/** Set once a Lifecycle handles SIGTERM/SIGINT; until then guardProcess's own handlers do. */
let lifecycleHandlesSignals = false;

const NOTE_ID_SHAPE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** What a fatal line says about an error: its message and stack, anything uuid-shaped blotted out. */
function describeFailure(err: unknown): Record<string, unknown> {
  if (err instanceof ConfigError) return { problems: err.problems };
  const scrub = (text: string) => text.replace(NOTE_ID_SHAPE, '[redacted]');
  if (err instanceof Error) return { err: scrub(err.message), errName: err.name, stack: err.stack === undefined ? undefined : scrub(err.stack) };
  return { err: scrub(String(err)) };
}

/**
 * The last line of a process that cannot go on: one JSON error line, the logger flushed, exit 1.
 * (A bare stack on stderr, Node's own way, is not a log line any pipeline can read.)
 */
export function exitFatally(logger: Logger, message: string, err: unknown, exit: Exit = processExit): void {
  // A refusal its settings explain (a port in use...) is one line naming the variable, not a stack.
  if (err instanceof ListenError) logger.error(`${message}: ${err.message}`, { code: err.code, variable: err.variable, address: err.address, port: err.port });
  else logger.error(message, describeFailure(err));
  logger.flush?.();
  exit(1);
}

/**
 * The first thing a service's main does: every way the process can end from here on leaves its
 * line in the log. An uncaught exception or unhandled rejection logs itself and exits 1; SIGTERM or
 * SIGINT before the service's Lifecycle handles them (during start-up) logs and exits as the signal
 * would have (143, 130). From then on Lifecycle.onSignals logs the shutdown and its end.
 */
export function guardProcess(logger: Logger, exit: Exit = processExit): void {
  // Node prints its warnings (deprecations of a dependency's API, such as http-proxy's util._extend on
  // Node 24) as bare text on stderr; as log lines they stay JSON, one object per line, like every other.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    logger.warn('node warning', { name: warning.name, code: (warning as NodeJS.ErrnoException).code, warning: warning.message });
  });
  process.on('uncaughtException', (err) => exitFatally(logger, 'uncaught exception', err, exit));
  process.on('unhandledRejection', (reason) => exitFatally(logger, 'unhandled rejection', reason, exit));
  for (const [signal, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) {
    process.once(signal, () => {
      if (lifecycleHandlesSignals) return;
      logger.info('stopped before start-up finished', { signal });
      logger.flush?.();
      exit(code);
    });
  }
}

export interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

/**
 * Stops what was started, in reverse order, once: the server before the consumers before the
 * pools. A hard deadline keeps the whole stop within the orchestrator's grace period.
 */
export class Lifecycle {
  private readonly stoppables: Stoppable[] = [];
  private stopping: Promise<void> | undefined;
  private draining = false;

  /**
   * drainDelayMs: how long the service keeps serving after it turned not-ready and before it stops
   * listening. Connections a client opened just before the signal still sit in the kernel's accept
   * queue, or are accepted with their request not yet read; closing the listener at once would reset
   * them. The delay lets them be read, after which closing waits for their answers.
   */
  constructor(private readonly logger: Logger, private readonly drainDelayMs = 500) {}

  add(name: string, stop: () => Promise<void> | void): void {
    this.stoppables.push({ name, stop: async () => { await stop(); } });
  }

  get isDraining(): boolean {
    return this.draining;
  }

  stop(): Promise<void> {
    this.stopping ??= this.runStop();
    return this.stopping;
  }

  private async runStop(): Promise<void> {
    this.draining = true;
    if (this.drainDelayMs > 0 && this.stoppables.length > 0) await new Promise((resolve) => setTimeout(resolve, this.drainDelayMs));
    for (const stoppable of [...this.stoppables].reverse()) {
      try {
        await stoppable.stop();
      } catch (err) {
        this.logger.warn('stop failed', { component: stoppable.name, err: (err as Error).message });
      }
    }
  }

  /**
   * SIGTERM/SIGINT: drain and exit 0 after a `stopped` line; past the grace period exit 1 so the
   * orchestrator knows. The logger is flushed before either exit.
   */
  onSignals(graceMs: number, exit: Exit = processExit): void {
    lifecycleHandlesSignals = true;
    const handler = (signal: string) => {
      const started = Date.now();
      this.logger.info('shutting down', { signal });
      const timer = setTimeout(() => {
        this.logger.error('shutdown exceeded its grace period', { graceMs });
        this.logger.flush?.();
        exit(1);
      }, graceMs);
      timer.unref();
      void this.stop().then(() => {
        clearTimeout(timer);
        this.logger.info('stopped', { signal, durationMs: Date.now() - started });
        this.logger.flush?.();
        exit(0);
      });
    };
    process.once('SIGTERM', handler);
    process.once('SIGINT', handler);
  }
}

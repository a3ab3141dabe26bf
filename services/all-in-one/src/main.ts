import { writeSync } from 'node:fs';
import { createLogger, exitFatally, guardProcess, Lifecycle, type Logger, type LogLevel } from '@vanish/common';
import { InProcessBus } from '@vanish/bus';
import { assembleAllInOne } from './assemble';
import { loadAllInOneConfig } from './config';
import { isColorSupported } from 'pino-pretty';
import { firstRunBanner, readableDestination, RoutineAtDebug, wantsReadableLogs } from './first-run';
import { SERVICE_MODULES } from './modules';

// At a terminal, readable lines and a banner; anywhere else (pipes, containers, CI, LOG_FORMAT=json), JSON.
const readable = wantsReadableLogs(process.env, process.stdout.isTTY === true);
const makeLogger = (level?: LogLevel): Logger =>
  readable ? new RoutineAtDebug(createLogger('all-in-one', level, readableDestination(1, process.stdout.isTTY === true && isColorSupported))) : createLogger('all-in-one', level);

const bootLogger = makeLogger();
guardProcess(bootLogger);

async function main(): Promise<void> {
  const config = loadAllInOneConfig(process.env);
  const logger = makeLogger(config.logLevel);
  const bus = new InProcessBus({ logger });
  const app = assembleAllInOne(config, SERVICE_MODULES, { bus, logger, closeBus: () => bus.close() });
  // No drain delay of its own: the gateway's (in app.stop) is the one that matters.
  const lifecycle = new Lifecycle(logger, 0);
  lifecycle.add('all-in-one', () => app.stop());
  lifecycle.onSignals(config.shutdownGraceMs);
  const ports = await app.start();
  if (readable) writeSync(1, firstRunBanner(config, ports));
  else logger.info('all-in-one ready', { dataDir: config.dataDir, ports });
}

main().catch((err: unknown) => exitFatally(bootLogger, 'all-in-one failed to start', err));

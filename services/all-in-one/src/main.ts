import { createLogger, exitFatally, guardProcess, Lifecycle } from '@vanish/common';
import { InProcessBus } from '@vanish/bus';
import { assembleAllInOne } from './assemble';
import { loadAllInOneConfig } from './config';
import { SERVICE_MODULES } from './modules';

const bootLogger = createLogger('all-in-one');
guardProcess(bootLogger);

async function main(): Promise<void> {
  const config = loadAllInOneConfig(process.env);
  const logger = createLogger('all-in-one', config.logLevel);
  const bus = new InProcessBus({ logger });
  const app = assembleAllInOne(config, SERVICE_MODULES, { bus, logger, closeBus: () => bus.close() });
  const lifecycle = new Lifecycle(logger);
  lifecycle.add('all-in-one', () => app.stop());
  lifecycle.onSignals(config.shutdownGraceMs);
  const ports = await app.start();
  logger.info('all-in-one ready', { dataDir: config.dataDir, ports });
}

main().catch((err: unknown) => exitFatally(bootLogger, 'all-in-one failed to start', err));

import { Lifecycle, createLogger, exitFatally, guardProcess } from '@vanish/common';
import { loadStatsConfig } from './config';
import { createStatsService } from './compose';

const bootLogger = createLogger('stats');
guardProcess(bootLogger);

async function main(): Promise<void> {
  const config = loadStatsConfig();
  const logger = createLogger('stats', config.logLevel);
  const service = await createStatsService(config, { logger });
  const lifecycle = new Lifecycle(logger);
  lifecycle.add('stats', () => service.stop());
  lifecycle.onSignals(config.shutdownGraceMs);
  await service.start();
}

main().catch((err: unknown) => exitFatally(bootLogger, 'stats failed to start', err));

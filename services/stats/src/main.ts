import { Lifecycle, createLogger } from '@vanish/common';
import { loadStatsConfig } from './config';
import { createStatsService } from './compose';

async function main(): Promise<void> {
  const config = loadStatsConfig();
  const logger = createLogger('stats', config.logLevel);
  const service = await createStatsService(config, { logger });
  const lifecycle = new Lifecycle(logger);
  lifecycle.add('stats', () => service.stop());
  lifecycle.onSignals(config.shutdownGraceMs);
  await service.start();
}

main().catch((err: Error) => {
  process.stderr.write(`stats failed to start: ${err.message}\n`);
  process.exit(1);
});

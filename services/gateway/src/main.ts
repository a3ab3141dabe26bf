import { createLogger, exitFatally, guardProcess, Lifecycle } from '@vanish/common';
import { loadGatewayConfig } from './config';
import { createGatewayService } from './compose';

const bootLogger = createLogger('gateway');
guardProcess(bootLogger);

async function main(): Promise<void> {
  const config = loadGatewayConfig(process.env, bootLogger);
  const logger = createLogger('gateway', config.logLevel);
  const service = await createGatewayService(config, { logger });
  const lifecycle = new Lifecycle(logger);
  lifecycle.add('gateway', () => service.stop());
  lifecycle.onSignals(config.shutdownGraceMs);
  await service.start();
}

main().catch((err: unknown) => exitFatally(bootLogger, 'gateway failed to start', err));

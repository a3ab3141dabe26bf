import { createLogger, Lifecycle } from '@vanish/common';
import { loadGatewayConfig } from './config';
import { createGatewayService } from './compose';

async function main(): Promise<void> {
  const config = loadGatewayConfig(process.env, createLogger('gateway'));
  const logger = createLogger('gateway', config.logLevel);
  const service = await createGatewayService(config, { logger });
  const lifecycle = new Lifecycle(logger);
  lifecycle.add('gateway', () => service.stop());
  await service.start();
  lifecycle.onSignals(config.shutdownGraceMs);
}

main().catch((err: unknown) => {
  process.stderr.write(`gateway failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

import { createLogger, exitFatally, guardProcess } from '@vanish/common';
import { createWebhooksService, loadWebhooksConfig } from './index';

const bootLogger = createLogger('webhooks');
guardProcess(bootLogger);

async function main(): Promise<void> {
  const config = loadWebhooksConfig(process.env, bootLogger);
  const logger = createLogger('webhooks', config.logLevel);
  const webhooks = await createWebhooksService(config, { logger });
  webhooks.onSignals(25_000);
  await webhooks.start();
}

main().catch((err: unknown) => exitFatally(bootLogger, 'webhooks failed to start', err));

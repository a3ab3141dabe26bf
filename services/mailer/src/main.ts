import { createLogger, exitFatally, guardProcess } from '@vanish/common';
import { createMailerService, loadMailerConfig } from './index';

const bootLogger = createLogger('mailer');
guardProcess(bootLogger);

async function main(): Promise<void> {
  const config = loadMailerConfig(process.env, bootLogger);
  const logger = createLogger('mailer', config.logLevel);
  const mailer = await createMailerService(config, { logger });
  mailer.onSignals(25_000);
  await mailer.start();
}

main().catch((err: unknown) => exitFatally(bootLogger, 'mailer failed to start', err));

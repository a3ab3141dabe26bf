import { createLogger } from '@vanish/common';
import { createMailerService, loadMailerConfig } from './index';

async function main(): Promise<void> {
  const bootLogger = createLogger('mailer');
  const config = loadMailerConfig(process.env, bootLogger);
  const logger = createLogger('mailer', config.logLevel);
  const mailer = await createMailerService(config, { logger });
  mailer.onSignals(25_000);
  await mailer.start();
}

main().catch((err: unknown) => {
  process.stderr.write(`mailer failed to start: ${(err as Error).message}\n`);
  process.exit(1);
});

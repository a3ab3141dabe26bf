import { createGatewayService, loadGatewayConfig } from '@vanish/gateway';
import { createMailerService, loadMailerConfig } from '@vanish/mailer';
import type { ServiceModule } from './assemble';

/**
 * The services this build runs, each wired through its module contract: `loadXConfig(env)` on the
 * environment the all-in-one hands it, then `createXService(config, { bus, logger })`.
 */
export const SERVICE_MODULES: readonly ServiceModule[] = [
  {
    name: 'mailer',
    async create(env, { bus, logger }) {
      return createMailerService(loadMailerConfig(env, logger), { bus, logger });
    },
  },
  {
    name: 'gateway',
    async create(env, { logger }) {
      return createGatewayService(loadGatewayConfig(env, logger), { logger });
    },
  },
];

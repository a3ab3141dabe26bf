import { createGatewayService, loadGatewayConfig } from '@vanish/gateway';
import { createMailerService, loadMailerConfig } from '@vanish/mailer';
import { createNotesService, loadNotesConfig } from '@vanish/notes';
import { createStatsService, loadStatsConfig } from '@vanish/stats';
import { createWebhooksService, loadWebhooksConfig } from '@vanish/webhooks';
import { appServedHere } from '@vanish/common';
import type { ServiceModule } from './assemble';

/**
 * The services this build runs, each wired through its module contract: `loadXConfig(env)` on the
 * environment the all-in-one hands it, then `createXService(config, { bus, logger })`. Only the
 * gateway is reached from outside and drains before it stops; the services behind it stop at once
 * after it (each waiting its own 500 ms made a stop take 3 to 5 s).
 */
const BEHIND_THE_GATEWAY = { drainDelayMs: 0 };
export const SERVICE_MODULES: readonly ServiceModule[] = [
  {
    name: 'notes',
    async create(env, { bus, logger }) {
      return createNotesService(loadNotesConfig(env), { bus, logger, ...BEHIND_THE_GATEWAY });
    },
  },
  {
    name: 'stats',
    async create(env, { bus, logger }) {
      return createStatsService(loadStatsConfig(env), { bus, logger, ...BEHIND_THE_GATEWAY });
    },
  },
  {
    name: 'mailer',
    async create(env, { bus, logger }) {
      return createMailerService(loadMailerConfig(env, logger), { bus, logger, ...BEHIND_THE_GATEWAY });
    },
  },
  {
    name: 'webhooks',
    async create(env, { bus, logger }) {
      return createWebhooksService(loadWebhooksConfig(env, logger), { bus, logger, ...BEHIND_THE_GATEWAY });
    },
  },
  {
    name: 'gateway',
    async create(env, { logger }) {
      // notes, stats and the mailer answer in this process: the gateway hands their requests to their apps
      // with no socket and no second HTTP parse (their loopback ports still listen, for their own clients).
      return createGatewayService(loadGatewayConfig(env, logger), { logger, localUpstreams: appServedHere });
    },
  },
];

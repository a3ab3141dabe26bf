import { configureKnex as configureDatabase, type ConfigureKnexOptions } from '@vanish/database';
import { createLogger } from '@vanish/common';
import type { Knex } from 'knex';

/**
 * The mailer's database (the shared set-up in @vanish/database, STYLE H8): longer timeouts than
 * the request-serving services (the mailer serves no latency-bound traffic; a slow database should
 * delay e-mails, not fail them).
 */
export function configureKnex(databaseUrl: string, options: Partial<ConfigureKnexOptions> = {}): Knex {
  return configureDatabase(databaseUrl, {
    connectTimeoutMs: 5_000,
    acquireTimeoutMs: 10_000,
    ...options,
    logger: options.logger ?? createLogger('mailer', 'warn').child('mailer/db'),
  });
}

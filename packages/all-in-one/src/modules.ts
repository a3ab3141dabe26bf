import type { ServiceModule } from './assemble';

/**
 * The services this build runs, each wired through its module contract
 * (`loadXConfig(env)` then `createXService(config, { bus, logger })`).
 */
export const SERVICE_MODULES: readonly ServiceModule[] = [];

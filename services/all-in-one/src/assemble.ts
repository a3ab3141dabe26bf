import type { Env, Logger, MessageConsumer, MessagePublisher } from '@vanish/common';
import { asOperatorSetIt, serviceEnv, type AllInOneConfig, type ServiceName, type ServicePorts } from './config';

export interface RunningParts {
  start(): Promise<ServicePorts>;
  stop(): Promise<void>;
}

export interface SharedParts {
  bus: MessagePublisher & MessageConsumer;
  logger: Logger;
}

/**
 * One service as the all-in-one sees it: load its config from the env handed to it, then create it
 * with the shared bus and logger (the module contract `createXService(config, overrides)`).
 */
export interface ServiceModule {
  name: ServiceName;
  create(env: Env, shared: SharedParts): Promise<RunningParts>;
}

export interface AllInOne {
  /** Starts the backing services, then the gateway pointed at where they listen. */
  start(): Promise<Partial<Record<ServiceName, ServicePorts>>>;
  /** Stops in reverse order of start: the gateway first, the bus last. */
  stop(): Promise<void>;
}

const START_ORDER: readonly ServiceName[] = ['notes', 'stats', 'mailer', 'webhooks', 'gateway'];

export function assembleAllInOne(
  config: AllInOneConfig,
  modules: readonly ServiceModule[],
  shared: SharedParts & { closeBus(): Promise<void> },
): AllInOne {
  const started: Array<{ name: ServiceName; parts: RunningParts }> = [];
  const log = shared.logger;
  let stopping: Promise<void> | undefined;

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      for (const { name, parts } of started.splice(0).reverse()) {
        try {
          await parts.stop();
          log.info('stopped', { component: name });
        } catch (err) {
          log.warn('stop failed', { component: name, err: (err as Error).message });
        }
      }
      await shared.closeBus();
    })();
    return stopping;
  };

  return {
    async start() {
      const ports: Partial<Record<ServiceName, ServicePorts>> = {};
      const upstreams: Partial<Record<Exclude<ServiceName, 'gateway'>, string>> = {};
      const byName = new Map(modules.map((module) => [module.name, module]));
      try {
        for (const name of START_ORDER) {
          const module = byName.get(name);
          if (!module) {
            log.warn('service not part of this build; skipped', { component: name });
            continue;
          }
          const env = serviceEnv(config, name, upstreams);
          const parts = await module.create(env, { bus: shared.bus, logger: shared.logger.child(name) });
          started.push({ name, parts });
          ports[name] = await parts.start().catch((err: unknown) => { throw asOperatorSetIt(name, err); });
          if (name !== 'gateway') upstreams[name] = `http://127.0.0.1:${ports[name]!.port}`;
          log.info('started', { component: name, port: ports[name]!.port, adminPort: ports[name]!.adminPort });
        }
      } catch (err) {
        await stop();
        throw err;
      }
      return ports;
    },
    stop,
  };
}

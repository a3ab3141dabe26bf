import { silentLogger, type Env, type MessageConsumer, type MessagePublisher } from '@vanish/common';
import { assembleAllInOne, type RunningParts, type ServiceModule } from './assemble';
import { loadAllInOneConfig, type ServiceName } from './config';

const fakeBus = {} as MessagePublisher & MessageConsumer; // never called by the fake services

/** A fake service module that records what it was given and what happened to it. */
function fakeModule(name: ServiceName, events: string[], envs: Map<ServiceName, Env>, fail?: 'start'): ServiceModule {
  let nextPort = { notes: 18081, stats: 18082, mailer: 18083, webhooks: 18084, gateway: 18080 }[name];
  return {
    name,
    async create(env, shared) {
      envs.set(name, env);
      expect(shared.bus).toBe(fakeBus);
      const parts: RunningParts = {
        async start() {
          if (fail === 'start') throw new Error(`${name} cannot start`);
          events.push(`start ${name}`);
          return { port: nextPort, adminPort: nextPort++ + 1000 };
        },
        async stop() {
          events.push(`stop ${name}`);
        },
      };
      return parts;
    },
  };
}

function setup(failing?: ServiceName) {
  const events: string[] = [];
  const envs = new Map<ServiceName, Env>();
  const config = loadAllInOneConfig({ DATA_DIR: '/var/lib/vanish-aio', PORT: '0', ADMIN_PORT: '0', NOTES_PORT: '0', NOTES_ADMIN_PORT: '0' });
  const modules = (['gateway', 'mailer', 'notes', 'stats'] as const).map((name) =>
    fakeModule(name, events, envs, failing === name ? 'start' : undefined));
  const app = assembleAllInOne(config, modules, {
    bus: fakeBus,
    logger: silentLogger,
    closeBus: async () => { events.push('close bus'); },
  });
  return { app, events, envs };
}

describe('assembleAllInOne', () => {
  it('when started, then the backing services start before the gateway, which is pointed at their actual ports', async () => {
    const { app, events, envs } = setup();
    const ports = await app.start();
    expect(events).toEqual(['start notes', 'start stats', 'start mailer', 'start gateway']);
    expect(ports.gateway).toEqual({ port: 18080, adminPort: 19080 });
    const gateway = envs.get('gateway')!;
    expect(gateway.NOTES_URL).toBe('http://127.0.0.1:18081');
    expect(gateway.STATS_URL).toBe('http://127.0.0.1:18082');
    expect(gateway.MAILER_URL).toBe('http://127.0.0.1:18083');
    expect(envs.get('notes')!.DATABASE_URL).toBe('sqlite:/var/lib/vanish-aio/notes.db');
  });

  it('when stopped, then services stop in reverse order and the bus closes last, once', async () => {
    const { app, events } = setup();
    await app.start();
    events.length = 0;
    await Promise.all([app.stop(), app.stop()]);
    expect(events).toEqual(['stop gateway', 'stop mailer', 'stop stats', 'stop notes', 'close bus']);
  });

  it('when a service fails to start, then the ones already created are stopped and the error is raised', async () => {
    const { app, events } = setup('mailer');
    await expect(app.start()).rejects.toThrow('mailer cannot start');
    expect(events).toEqual(['start notes', 'start stats', 'stop mailer', 'stop stats', 'stop notes', 'close bus']);
  });
});

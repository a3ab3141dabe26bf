import { createLogger, exitFatally, guardProcess } from '@vanish/common';
import { createNotesService } from './compose';
import { loadNotesConfig } from './config';

const bootLogger = createLogger('notes');
guardProcess(bootLogger);

/** `node dist/main.js`: the notes service alone, configured by its environment only. */
async function main(): Promise<void> {
  const config = loadNotesConfig(process.env);
  const service = await createNotesService(config);
  service.lifecycle.onSignals(config.shutdownGraceMs);
  await service.start();
}

main().catch((err: unknown) => exitFatally(bootLogger, 'notes failed to start', err));

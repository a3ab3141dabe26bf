import { ConfigError } from '@vanish/common';
import { createNotesService } from './compose';
import { loadNotesConfig } from './config';

/** `node dist/main.js`: the notes service alone, configured by its environment only. */
async function main(): Promise<void> {
  const config = loadNotesConfig(process.env);
  const service = await createNotesService(config);
  service.lifecycle.onSignals(config.shutdownGraceMs);
  await service.start();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof ConfigError ? err.message : `notes failed to start: ${(err as Error).stack ?? String(err)}`}\n`);
  process.exit(1);
});

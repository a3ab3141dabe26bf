'use strict';
// A process that ends one way (argv[2]) right after a burst of log lines and a last one, through
// the built common package's logger and process guards, as a service's main uses them.
// `npm run build` first. Used by test/exit-logs.e2e.test.ts.
const path = require('node:path');
const { Lifecycle, createLogger, guardProcess } = require(path.resolve(__dirname, '../../packages/common/dist'));

const how = process.argv[2];
const burst = Number(process.argv[3] ?? '2000');
const logger = createLogger('fixture');
guardProcess(logger);

for (let i = 0; i < burst; i += 1) logger.info('burst', { i });
logger.info('last line before exit');

if (how === 'uncaught-exception') {
  setImmediate(() => { throw new Error('thrown outside any handler'); });
} else if (how === 'unhandled-rejection') {
  void Promise.reject(new Error('rejected with nobody waiting'));
} else if (how === 'grace-exceeded') {
  const lifecycle = new Lifecycle(logger, 0);
  lifecycle.add('never stops', () => new Promise(() => {}));
  lifecycle.onSignals(200);
  setInterval(() => {}, 1000);
  process.kill(process.pid, 'SIGTERM');
} else if (how === 'blocked-then-killed') {
  // A stuck event loop (a runaway loop, long synchronous work) until the orchestrator's SIGKILL:
  // no callback runs again, so only lines already handed to the kernel survive.
  require('node:fs').writeFileSync(process.argv[4], 'blocked');
  for (;;) { /* spin */ }
} else if (how === 'signal-during-start-up') {
  setInterval(() => {}, 1000);
  process.kill(process.pid, 'SIGTERM');
} else {
  throw new Error(`unknown way to end: ${how}`);
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const ALL_IN_ONE_MAIN = 'services/all-in-one/dist/main.js';

/**
 * The node flags `npm start` gives the all-in-one: what stands between `node` and its main.js in the root
 * package.json's start script. The tests that run the all-in-one as users do, and those that check the image
 * runs the same process, read them here, so that a change of flags reaches all of them at once.
 * Throws when the start script no longer runs the all-in-one that way (the tests' assumption is then wrong).
 */
export function npmStartNodeFlags(root: string): string[] {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const start = scripts?.start ?? '';
  const command = start.split('&&').map((part) => part.trim()).find((part) => part.startsWith('node '));
  if (!command?.endsWith(` ${ALL_IN_ONE_MAIN}`)) {
    throw new Error(`package.json's start script no longer runs \`node <flags> ${ALL_IN_ONE_MAIN}\`: ${start}`);
  }
  return command.split(/\s+/).slice(1, -1);
}

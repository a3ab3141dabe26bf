import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * tus-node-body.ts overrides @tus/server's PATCH `writeToStore` with a copy of the library's own steps as of 2.4.5
 * (docs/performance.md, issue 33). An upgrade must re-read that method first: this test stops one that did not.
 */
describe('the tus version tus-node-body.ts was written against', () => {
  it('when @tus/server is installed, then it is the version whose writeToStore the override copies', () => {
    const manifest = JSON.parse(readFileSync(join(require.resolve('@tus/server'), '../../package.json'), 'utf8')) as { name: string; version: string };
    expect(manifest.name).toBe('@tus/server');
    // On an upgrade: compare BaseHandler.writeToStore with writeToStore in tus-node-body.ts, then change both places.
    expect(manifest.version).toBe('2.4.5');
  });
});

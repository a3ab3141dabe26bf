import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { npmStartNodeFlags } from './npm-start';

function rootWithStart(start: string): string {
  const root = mkdtempSync(join(tmpdir(), 'vanish-npm-start-'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { start } }));
  return root;
}

describe('npmStartNodeFlags', () => {
  const made: string[] = [];
  afterAll(() => made.forEach((root) => rmSync(root, { recursive: true, force: true })));

  it('when the start script builds and then runs the all-in-one, then the flags between node and main.js are returned in order', () => {
    const root = rootWithStart('npm run build && node --heap-growing-percent=50 --max-semi-space-size=8 services/all-in-one/dist/main.js');
    made.push(root);
    expect(npmStartNodeFlags(root)).toEqual(['--heap-growing-percent=50', '--max-semi-space-size=8']);
  });

  it('when node runs the all-in-one without flags, then none are returned', () => {
    const root = rootWithStart('node services/all-in-one/dist/main.js');
    made.push(root);
    expect(npmStartNodeFlags(root)).toEqual([]);
  });

  it('when the start script runs something else, then it throws and quotes the script', () => {
    const root = rootWithStart('npm run build && node services/gateway/dist/main.js');
    made.push(root);
    expect(() => npmStartNodeFlags(root)).toThrow(/services\/gateway\/dist\/main\.js/);
  });

  it("when this repository's package.json is read, then npm start gives the all-in-one at least one flag", () => {
    expect(npmStartNodeFlags(resolve(__dirname, '../../..')).length).toBeGreaterThan(0);
  });
});

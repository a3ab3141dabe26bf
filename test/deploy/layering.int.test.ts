// The house rule on layers: packages/ are libraries the services build on, so nothing under
// packages/*/src may import a service (a deployable). The all-in-one process, which does import every
// service, is itself a deployable and lives in services/all-in-one.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { ROOT } from './deploy-files';

const SERVICE_PACKAGE = /^@vanish\/(notes|stats|mailer|gateway|all-in-one)(\/|$)/;

/** Every module specifier a file names: static and dynamic imports, `export ... from`, require(). */
function specifiersOf(text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map((file) => file.fileName);
}

/** Why a specifier written in `file` reaches into services/, or undefined when it does not. */
function serviceImport(file: string, specifier: string): string | undefined {
  if (SERVICE_PACKAGE.test(specifier)) return `imports the service package ${specifier}`;
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(ROOT, resolve(dirname(file), specifier));
  return target.startsWith(`services${'/'}`) ? `imports ${target}` : undefined;
}

function serviceImportsUnder(directories: readonly string[]): string[] {
  const found: string[] = [];
  for (const directory of directories) {
    for (const name of readdirSync(directory, { recursive: true, encoding: 'utf8' })) {
      if (!/\.(ts|js|mjs|cjs)$/.test(name) || /(^|\/)(node_modules|dist)\//.test(name)) continue;
      const file = join(directory, name);
      for (const specifier of specifiersOf(readFileSync(file, 'utf8'))) {
        const why = serviceImport(file, specifier);
        if (why) found.push(`${relative(ROOT, file)} ${why}`);
      }
    }
  }
  return found;
}

const PACKAGES = readdirSync(join(ROOT, 'packages'), { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);

describe('layers: packages/ never import services/', () => {
  it('when the packages are listed, then they are the libraries only (the all-in-one deployable lives in services/)', () => {
    expect(PACKAGES.sort()).toEqual(['bus', 'cli', 'common', 'database', 'envelope', 'testkit']);
    expect(readdirSync(join(ROOT, 'services'))).toContain('all-in-one');
  });

  it('when every source file of every package is read (src/, and the plain-JS envelope and CLI), then none imports from services/ or a service package', () => {
    expect(serviceImportsUnder(PACKAGES.map((name) => join(ROOT, 'packages', name)))).toEqual([]);
  });

  it('when a package declares its dependencies, then none is a service', () => {
    for (const name of PACKAGES) {
      const manifest = JSON.parse(readFileSync(join(ROOT, 'packages', name, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
      const dependencies = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies, ...manifest.peerDependencies });
      expect({ name, services: dependencies.filter((dependency) => SERVICE_PACKAGE.test(dependency)) }).toEqual({ name, services: [] });
    }
  });

  it.each([
    ['a service package', "import { createNotesService } from '@vanish/notes';", 'imports the service package @vanish/notes'],
    ['a subpath of one', "export * from '@vanish/gateway/dist/config';", 'imports the service package @vanish/gateway/dist/config'],
    ['a relative path up into services/', "const m = require('../../../services/stats/src/config');", 'imports services/stats/src/config'],
    ['a dynamic import', "const m = await import('../../../services/mailer/src');", 'imports services/mailer/src'],
  ])('when a file imports %s, then the check names it (it is not a no-op)', (_what, line, why) => {
    const file = join(ROOT, 'packages', 'common', 'src', 'example.ts');
    const found = specifiersOf(line).map((specifier) => serviceImport(file, specifier)).filter(Boolean);
    expect(found).toEqual([why]);
  });
});

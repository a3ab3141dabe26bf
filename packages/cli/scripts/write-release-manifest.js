'use strict';
/*
 * Run by `npm pack` and `npm publish` (prepack), after check-envelope.js: the package ships lib/release-manifest.json,
 * the release manifest of the vanish release with the CLI's own version (DECISIONS 17), which `vanish verify-site`
 * compares a site with. The CLI and the repository are released together from one commit with one version: a CLI
 * whose version is not the repository's is not packed. The manifest is written by the notes service's own code
 * (the same that the build and the Dockerfile run), from the assets of this checkout: run `npm run build` first.
 */
const { execFileSync } = require('node:child_process');
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const root = join(__dirname, '..', '..', '..');
const cliVersion = require('../package.json').version;
const repoVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
if (cliVersion !== repoVersion) {
  console.error(`write-release-manifest: the CLI is ${cliVersion} but the repository is ${repoVersion}: they are released together with one version`);
  process.exit(1);
}
const writer = join(root, 'services', 'notes', 'dist', 'release', 'write-release-manifest.js');
if (!existsSync(writer)) {
  console.error(`write-release-manifest: ${writer} is missing: run "npm run build" at the repository's root first`);
  process.exit(1);
}
execFileSync(process.execPath, [writer, '--out', join(__dirname, '..', 'lib', 'release-manifest.json')], { stdio: 'inherit' });

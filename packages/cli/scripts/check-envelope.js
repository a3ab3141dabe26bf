'use strict';
/*
 * Run by `npm pack` and `npm publish` (prepack): the package ships lib/envelope.js and lib/request-seal.js, which
 * must be byte for byte the web pages' (packages/envelope/*.js, served as /assets/envelope.js and
 * /assets/request-seal.js). A copy that drifted would seal notes the pages cannot open, or the other way round:
 * then nothing is packed.
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

for (const file of ['envelope.js', 'request-seal.js']) {
  const shipped = join(__dirname, '..', 'lib', file);
  const source = join(__dirname, '..', '..', 'envelope', file);
  let pages;
  try {
    pages = readFileSync(source);
  } catch (err) {
    console.error(`check-envelope: cannot read ${source} (${err.code}): pack the CLI from the vanish repository`);
    process.exit(1);
  }
  if (!readFileSync(shipped).equals(pages)) {
    console.error(`check-envelope: ${shipped} differs from ${source}. Copy it: cp packages/envelope/${file} packages/cli/lib/${file}`);
    process.exit(1);
  }
}

'use strict';
/*
 * Run by `npm pack` and `npm publish` (prepack): the package ships lib/envelope.js, which must be byte for byte
 * the web page's envelope (packages/envelope/envelope.js, served as /assets/envelope.js). A copy that drifted
 * would seal notes the pages cannot open, or the other way round: then nothing is packed.
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const shipped = join(__dirname, '..', 'lib', 'envelope.js');
const source = join(__dirname, '..', '..', 'envelope', 'envelope.js');
let pages;
try {
  pages = readFileSync(source);
} catch (err) {
  console.error(`check-envelope: cannot read ${source} (${err.code}): pack the CLI from the vanish repository`);
  process.exit(1);
}
if (!readFileSync(shipped).equals(pages)) {
  console.error(`check-envelope: ${shipped} differs from ${source}. Copy it: cp packages/envelope/envelope.js packages/cli/lib/envelope.js`);
  process.exit(1);
}

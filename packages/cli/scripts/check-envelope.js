'use strict';
/*
 * Run by `npm pack` and `npm publish` (prepack): the package ships lib/envelope.js, lib/file-stream.js and
 * lib/request-seal.js, which must be byte for byte the web pages' (packages/envelope/*.js, served under /assets).
 * A copy that drifted would seal notes, files or answers the pages cannot open, or the other way round: then
 * nothing is packed. The shipped file-stream.js must also pass the format's published test vectors
 * (packages/envelope/test-vectors/file-stream.json, docs/file-format.md).
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const source = join(__dirname, '..', '..', 'envelope');
for (const name of ['envelope.js', 'file-stream.js', 'request-seal.js']) {
  const shipped = join(__dirname, '..', 'lib', name);
  let pages;
  try {
    pages = readFileSync(join(source, name));
  } catch (err) {
    console.error(`check-envelope: cannot read ${join(source, name)} (${err.code}): pack the CLI from the vanish repository`);
    process.exit(1);
  }
  if (!readFileSync(shipped).equals(pages)) {
    console.error(`check-envelope: ${shipped} differs from ${join(source, name)}. Copy it: cp packages/envelope/${name} packages/cli/lib/${name}`);
    process.exit(1);
  }
}

const verify = require(join(source, 'test-vectors', 'verify.js'));
const vectors = JSON.parse(readFileSync(join(source, 'test-vectors', 'file-stream.json'), 'utf8'));
verify(vectors, require(join(__dirname, '..', 'lib', 'file-stream.js'))).then((checks) => {
  console.error(`check-envelope: lib/file-stream.js passes the ${checks} checks of the format's test vectors`);
}, (err) => {
  console.error(`check-envelope: lib/file-stream.js fails the format's test vectors: ${err.message}`);
  process.exit(1);
});

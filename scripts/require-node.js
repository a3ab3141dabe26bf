// Stops `npm start`, `npm test`, `npm run bench` (and `npm install`'s own lifecycle) at once, with one line,
// on a Node older than package.json's "engines" asks for: without it an older Node builds for a minute and
// then dies inside a dependency (undici) with a stack trace that names nothing. `npm install` itself is
// stopped earlier still by .npmrc's engine-strict (npm's EBADENGINE), before it downloads anything.
//
// Written in the syntax of the oldest Node a user might still have (no const, arrows or template strings),
// so that Node parses it and prints the line instead of a SyntaxError.
var path = require('path');
var fs = require('fs');

var root = path.join(__dirname, '..');
var range = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).engines.node; // ">=24"
var needed = Number(/(\d+)/.exec(range)[1]);
var pinned = fs.readFileSync(path.join(root, '.nvmrc'), 'utf8').replace(/\s+/g, '');
var found = process.versions.node;

if (Number(found.split('.')[0]) < needed) {
  process.stderr.write(
    'vanish needs Node.js ' + needed + ' or newer, but this is Node.js ' + found + ' (' + process.execPath + '). ' +
    'Get it with `nvm install` or `fnm use --install-if-missing` in this folder (both read .nvmrc: ' + pinned + '), ' +
    'or skip Node: docker run -p 8080:8080 -v vanish-data:/data ghcr.io/vanish-notes/vanish\n'
  );
  process.exit(1);
}

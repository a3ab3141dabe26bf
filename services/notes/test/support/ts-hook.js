'use strict';
// Lets a plain `node` child process run this repository's TypeScript sources, the way jest does
// (same @swc/core transform, @vanish/* mapped to src), so multi-process tests need no build step.
const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');
const { transformSync } = require('@swc/core');

const root = path.resolve(__dirname, '../../../..');
const packages = { common: 'packages/common', bus: 'packages/bus', database: 'packages/database', testkit: 'packages/testkit', notes: 'services/notes' };

const originalResolve = Module._resolveFilename;
Module._resolveFilename = function resolve(request, parent, ...rest) {
  const match = /^@vanish\/(common|bus|database|testkit|notes)(\/.*)?$/.exec(request);
  if (match) {
    const base = path.join(root, packages[match[1]], 'src');
    request = match[2] ? path.join(base, match[2]) : base;
  }
  return originalResolve.call(this, request, parent, ...rest);
};

require.extensions['.ts'] = function compile(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, {
    filename,
    sourceMaps: 'inline',
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};

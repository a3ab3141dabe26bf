#!/usr/bin/env node
'use strict';
/*
 * vanish, the command-line client (DECISIONS 13): `vanish create` seals a note on this machine and prints its
 * link and receipt link; `vanish open LINK` reads a note through the server's note page and opens it here.
 * Plain Node.js 20 or later and one dependency (tus-js-client, for resumable file uploads): the envelope and file
 * format code (lib/envelope.js, lib/file-stream.js) are the web page's own files.
 */
const { run } = require('../lib/main');

run(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }).then((status) => {
  process.exitCode = status;
});

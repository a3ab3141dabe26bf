#!/usr/bin/env node
'use strict';
/*
 * vanish, the command-line client (DECISIONS 13): `vanish create` seals a note on this machine and prints its
 * link and receipt link; `vanish open LINK` reads a note through the server's note page and opens it here.
 * Plain Node.js 20 or later and one dependency (tus-js-client, for resumable file uploads): the envelope and file
 * format code (lib/envelope.js, lib/file-stream.js) are the web page's own files.
 */
const v8 = require('node:v8');

/*
 * The young generation kept at its first size (V8 grows it to 16 MiB semi-spaces). Moving a file makes few
 * JavaScript objects per byte but a fresh Buffer per socket read, per HTTP body piece and per opened segment, and
 * those are freed only by a garbage collection. With a small young generation a scavenge comes every few MB and
 * frees them; with a large one they pile up until their external memory (about 64 MB) starts a full collection,
 * and glibc hands their pages back and takes them again: about a quarter more CPU per GiB and 40 to 50 MB more RSS
 * for `vanish open` and `vanish create --attach` (docs/performance.md, "Files: where the CPU and the memory go").
 * Set here because npm's bin link gives node no flags; V8 reads this factor each time it would grow the space (a
 * V8 that did not would only leave the space to grow, as before).
 */
v8.setFlagsFromString('--semi-space-growth-factor=1');

const { run } = require('../lib/main');

run(process.argv.slice(2), { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env }).then((status) => {
  process.exitCode = status;
});

#!/usr/bin/env node
// What the passcode step of a create or a reveal costs: one scrypt derivation with the notes service's
// production parameters (PRODUCTION_SCRYPT_PARAMS, read from the built service so the figure follows the
// code), timed one at a time. Prints the median wall time and the median CPU time of the derivation.
//   npm run build && node load-tests/scrypt-cost.mjs [runs=21]
// (lib/thresholds.js and README.md quote its output.)
import { randomBytes, scrypt } from 'node:crypto';
import { createRequire } from 'node:module';
import { cpus, loadavg } from 'node:os';

const require = createRequire(import.meta.url);
const { PRODUCTION_SCRYPT_PARAMS: params } = require('../services/notes/dist/domain/note-crypto.js');
const runs = Number(process.argv[2] ?? 21);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs must be a positive integer, not ${process.argv[2]}`);

// As the service calls it (services/notes/src/domain/note-crypto.ts, nodeScrypt): a 32-byte key, a
// 16-byte salt, maxmem twice the 128·N·r bytes scrypt needs.
const maxmem = 256 * params.N * params.r + 1024 * 1024;
/** @returns {Promise<void>} */
const derive = () => new Promise((resolve, reject) => {
  scrypt('correct horse battery staple', randomBytes(16), 32, { ...params, maxmem }, (err) => (err ? reject(err) : resolve()));
});

const median = (/** @type {number[]} */ values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

await derive(); // warm-up: the thread pool and the first allocation of the 32 MiB block
const wall = [];
const cpu = [];
for (let i = 0; i < runs; i += 1) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await derive();
  wall.push(performance.now() - t0);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1000);
}
console.log(`scrypt N=${params.N} (2^${Math.log2(params.N)}), r=${params.r}, p=${params.p}: ` +
  `${(128 * params.N * params.r) / 2 ** 20} MiB per derivation, ${runs} derivations one at a time`);
console.log(`median wall ${median(wall).toFixed(1)} ms (min ${Math.min(...wall).toFixed(1)}, max ${Math.max(...wall).toFixed(1)}), ` +
  `median CPU ${median(cpu).toFixed(1)} ms; ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${loadavg()[0].toFixed(1)}`);

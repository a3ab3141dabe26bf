'use strict';
/**
 * A young-generation collection (a scavenge) after every 8 MiB of a file read to be sealed and uploaded, so that
 * the upload's Buffers (each file read and sealed segment is a fresh one, outside V8's heap) are freed within a few
 * MB instead of piling up until their external memory starts a full collection: `vanish create --attach` of 1 GiB
 * peaked at 155 to 176 MB, 123 to 134 with it, for no more CPU. Not used for downloads: there the young generation
 * kept at its first size (bin/vanish.js) already brings scavenges often enough, and forced ones cost CPU for 7 to
 * 13 MB. The servers do the same (TransferScavenger in @vanish/common; docs/performance.md, "Files: where the CPU
 * and the memory go"); this package depends on none of the services' code, so it has its own.
 *
 * V8's `gc` is taken from a new vm context with `--expose-gc` set for that moment only: nothing else sees it.
 * Where that is not possible, nothing is done.
 */
const { setFlagsFromString } = require('node:v8');
const { runInNewContext } = require('node:vm');

const EVERY_BYTES = 8 * 2 ** 20;

function minorCollection() {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc');
    setFlagsFromString('--no-expose-gc');
    return typeof gc === 'function' ? () => gc({ type: 'minor' }) : null;
  } catch {
    return null;
  }
}

let pending = 0;
let scavenge;

/** Counts file bytes read for an upload; every 8 MiB, one scavenge. */
function moved(bytes) {
  pending += bytes;
  if (pending < EVERY_BYTES) return;
  pending = 0;
  if (scavenge === undefined) scavenge = minorCollection();
  if (scavenge) scavenge();
}

module.exports = { moved };

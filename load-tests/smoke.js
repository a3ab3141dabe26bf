// Smoke: one user runs every journey once and every error answer is checked. Cheap enough to run against
// a deployment with the default limits (7 creates, about 15 views and 1 stats read per iteration).
//   k6 run --no-usage-report -e BASE_URL=https://notes.example.org load-tests/smoke.js
import { numberFrom } from './lib/config.js';
import { userMix } from './lib/journeys.js';
import { errorContract } from './lib/contract.js';
import { smokeThresholds } from './lib/thresholds.js';

/** @type {import('k6/options').Options} */
export const options = {
  vus: 1,
  iterations: numberFrom(__ENV.ITERATIONS, 1),
  thresholds: smokeThresholds(),
};

// No setup(): the VU makes its own seed notes (lib/journeys.js, seedNotes), so no uuid reaches k6's summary.
export default function () {
  userMix({ mix: 'all', seedNotes: numberFrom(__ENV.SEED_NOTES, 2) });
  errorContract();
}

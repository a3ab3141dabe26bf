// Stress: well above the average load, in steps, to see where latency and errors start to climb.
//   k6 run --no-usage-report -e BASE_URL=... -e VUS=20 load-tests/stress.js   (steps at 2x, 4x and 6x VUS; limits raised: see README)
import { numberFrom } from './lib/config.js';
import { userMix } from './lib/journeys.js';
import { loadThresholds } from './lib/thresholds.js';

const VUS = numberFrom(__ENV.VUS, 20);
const STEP = __ENV.STEP || '3m';

/** @type {import('k6/options').Options} */
export const options = {
  stages: [
    { duration: '1m', target: VUS * 2 },
    { duration: STEP, target: VUS * 2 },
    { duration: '1m', target: VUS * 4 },
    { duration: STEP, target: VUS * 4 },
    { duration: '1m', target: VUS * 6 },
    { duration: STEP, target: VUS * 6 },
    { duration: '2m', target: 0 },
  ],
  thresholds: loadThresholds({ p95: 250, p99: 750, errorRate: 0.02 }),
};

// No setup(): each VU makes its own seed notes (lib/journeys.js, seedNotes), so no uuid reaches k6's summary.
export default function () {
  userMix();
}

// Spike: a sudden burst (a link shared on a busy channel), then back to normal: the system must absorb it
// and recover without errors piling up.
//   k6 run --no-usage-report -e BASE_URL=... -e VUS=10 -e PEAK=200 load-tests/spike.js   (limits raised: see README)
import { numberFrom } from './lib/config.js';
import { userMix } from './lib/journeys.js';
import { loadThresholds } from './lib/thresholds.js';

const VUS = numberFrom(__ENV.VUS, 10);
const PEAK = numberFrom(__ENV.PEAK, 200);

/** @type {import('k6/options').Options} */
export const options = {
  stages: [
    { duration: '30s', target: VUS },
    { duration: '10s', target: PEAK },
    { duration: __ENV.HOLD || '1m', target: PEAK },
    { duration: '10s', target: VUS },
    { duration: '1m', target: VUS },
    { duration: '10s', target: 0 },
  ],
  thresholds: loadThresholds({ p95: 500, p99: 1500, errorRate: 0.05 }),
};

// No setup(): each VU makes its own seed notes (lib/journeys.js, seedNotes), so no uuid reaches k6's summary.
export default function () {
  userMix();
}

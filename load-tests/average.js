// Average load: the traffic a deployment expects on a normal day, ramped up, held, ramped down.
//   k6 run --no-usage-report -e BASE_URL=... -e VUS=20 -e HOLD=5m load-tests/average.js   (limits raised: see README)
import { numberFrom } from './lib/config.js';
import { userMix } from './lib/journeys.js';
import { loadThresholds } from './lib/thresholds.js';

const VUS = numberFrom(__ENV.VUS, 20);

/** @type {import('k6/options').Options} */
export const options = {
  stages: [
    { duration: __ENV.RAMP || '1m', target: VUS },
    { duration: __ENV.HOLD || '5m', target: VUS },
    { duration: __ENV.RAMP || '1m', target: 0 },
  ],
  thresholds: loadThresholds({ p95: 100, p99: 250, errorRate: 0.01 }),
};

// No setup(): each VU makes its own seed notes (lib/journeys.js, seedNotes), so no uuid reaches k6's summary.
export default function () {
  userMix();
}
